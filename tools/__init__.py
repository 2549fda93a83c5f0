"""Tools: one module per tool family, described as data in data/catalogue.json."""
