"""GitHub API access for the `github` source: authentication, a rate-limit-aware
GraphQL client on top of githubkit, the queries, fetching merged pull requests
with their discussion, and incremental sync into the store.

The source (`repobrief.sources.github`) and the `sync` command use this
package; nothing else in the core imports it.
"""
