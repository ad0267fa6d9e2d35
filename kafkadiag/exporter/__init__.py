"""`kafkadiag lag --serve`: a Prometheus scrape endpoint that reads the cluster when scraped."""
