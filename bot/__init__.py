"""mnemo's outer layer: the messengers, the conversation engine, learning, commands, the models and the command line."""
