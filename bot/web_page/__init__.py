"""mnemo's own web server (MNEMO_WEB_LISTEN): /metrics and /healthz for the operator; the place for the web page."""
