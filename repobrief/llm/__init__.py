"""Talking to OpenAI-compatible chat endpoints for the `llm` engine: the client
(retries, budget, cache, accounting), the answer schemas, the prompts, tolerant
JSON extraction and the grounding checks. `repobrief.engines.llm` puts them together."""
