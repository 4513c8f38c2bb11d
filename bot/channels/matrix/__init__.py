"""Matrix: matrix-nio in front of the engine and the commands."""
