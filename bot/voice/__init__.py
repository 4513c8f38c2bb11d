"""Voice notes in and voice replies out: the Transcriber and Speaker ports and their backends."""
