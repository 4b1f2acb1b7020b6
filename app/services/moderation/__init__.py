"""Moderation (docs/rules.md, Moderation): roles and the one check of who may moderate,
reports and their queue, mutes and bans (a ban enforced at once on every process), hidden
chat messages, and the record of who did each and when."""
