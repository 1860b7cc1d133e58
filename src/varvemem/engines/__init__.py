"""The engines: update (write path), retrieval (read path) and the scoring math they share."""
