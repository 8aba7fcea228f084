"""Background consolidation ("sleep-time"): on cron schedules in UTC, each scope's new
conversation turns (after its watermark) go through the normal pipeline, idle threads
are summarised into episodes, and the watermark moves in the same transaction as the
memories, so every turn is consolidated exactly once. See docs/EPISODES.md."""
