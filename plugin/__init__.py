"""Host adapters: the standalone app entry and (later) the Krita plugin."""
