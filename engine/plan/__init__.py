"""Planning: an instruction's words and references into subtasks (the offline grammar, an LLM through the openai client), in the order they run."""
