"""The language models: the LLM port, retries and error mapping, one module per provider, the factory, metering."""
