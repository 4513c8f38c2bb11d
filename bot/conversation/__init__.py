"""One message in, one reply out: the engine, the prompt, markers, tools, safety, consent, rate limit."""
