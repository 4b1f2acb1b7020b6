"""Table chat (docs/rules.md, Table chat): two channels per table, who reads and writes them,
the per-player message limit, storage of the last messages, and live delivery."""
