"""The GraphQL documents the GitHub client sends.

One search query brings a page of merged pull requests with the first page of
every connection (files, labels, reviews, review threads with their comments,
issue comments, closing issues); follow-up queries fetch further pages of one
connection of one pull request (or of one review thread). Every document asks
for `rateLimit` so that the cost of each call is known and a nearly exhausted
budget is waited out before the next call.

Page sizes are chosen so that one search page stays well inside GitHub's
node limit (500,000) and costs about ten points.
"""

from __future__ import annotations

SEARCH_PAGE = 25  # pull requests per search page
FILES_PAGE = 100
LABELS_PAGE = 50
REVIEWS_PAGE = 50
THREADS_PAGE = 30
THREAD_COMMENTS_PAGE = 20
COMMENTS_PAGE = 50
ISSUES_PAGE = 10
FOLLOWUP_PAGE = 100  # follow-up pages take the maximum GitHub allows

RATE_LIMIT = "rateLimit { cost remaining resetAt limit }"

ACTOR = "author { __typename login }"

FILE_FIELDS = "path additions deletions changeType"
REVIEW_FIELDS = f"{ACTOR} state body submittedAt authorAssociation"
COMMENT_FIELDS = f"{ACTOR} body createdAt authorAssociation"
THREAD_COMMENT_FIELDS = f"{ACTOR} body createdAt diffHunk path authorAssociation"
PAGE_INFO = "pageInfo { hasNextPage endCursor }"


def _thread_fields(comments_page: int) -> str:
    return (
        "id isResolved path "
        f"comments(first: {comments_page}) {{ totalCount {PAGE_INFO} nodes {{ {THREAD_COMMENT_FIELDS} }} }}"
    )


PULL_REQUEST_FIELDS = f"""
fragment PullRequestFields on PullRequest {{
  number title body url
  {ACTOR}
  mergedAt updatedAt baseRefName
  additions deletions changedFiles
  mergeCommit {{ oid }}
  labels(first: {LABELS_PAGE}) {{ totalCount {PAGE_INFO} nodes {{ name }} }}
  files(first: {FILES_PAGE}) {{ totalCount {PAGE_INFO} nodes {{ {FILE_FIELDS} }} }}
  reviews(first: {REVIEWS_PAGE}) {{ totalCount {PAGE_INFO} nodes {{ {REVIEW_FIELDS} }} }}
  reviewThreads(first: {THREADS_PAGE}) {{ totalCount {PAGE_INFO} nodes {{ {_thread_fields(THREAD_COMMENTS_PAGE)} }} }}
  comments(first: {COMMENTS_PAGE}) {{ totalCount {PAGE_INFO} nodes {{ {COMMENT_FIELDS} }} }}
  closingIssuesReferences(first: {ISSUES_PAGE}) {{ totalCount {PAGE_INFO} nodes {{ number }} }}
}}
"""

# The repository is asked for alongside the search so that an unknown or
# unreadable repository is reported as such (search alone answers with a
# generic validation error) without spending an extra request.
SEARCH = (
    """
query SearchMergedPullRequests($owner: String!, $name: String!, $q: String!, $first: Int!, $after: String) {
  repository(owner: $owner, name: $name) { nameWithOwner isPrivate createdAt defaultBranchRef { name } }
  search(query: $q, type: ISSUE, first: $first, after: $after) {
    issueCount
    pageInfo { hasNextPage endCursor }
    nodes { __typename ... on PullRequest { ...PullRequestFields } }
  }
  RATE_LIMIT
}
""".replace("RATE_LIMIT", RATE_LIMIT)
    + PULL_REQUEST_FIELDS
)


def pull_requests_by_number(numbers: list[int]) -> str:
    """One document that fetches several pull requests by number (aliases `pr<N>`)."""
    fields = "\n    ".join(f"pr{n}: pullRequest(number: {int(n)}) {{ ...PullRequestFields }}" for n in numbers)
    return (
        """
query PullRequestsByNumber($owner: String!, $name: String!) {
  repository(owner: $owner, name: $name) {
    nameWithOwner
    FIELDS
  }
  RATE_LIMIT
}
""".replace("FIELDS", fields).replace("RATE_LIMIT", RATE_LIMIT)
        + PULL_REQUEST_FIELDS
    )


# Further pages of one connection of one pull request. The node selection of
# each connection is the same as in the fragment.
CONNECTION_NODES = {
    "files": FILE_FIELDS,
    "labels": "name",
    "reviews": REVIEW_FIELDS,
    "reviewThreads": _thread_fields(FOLLOWUP_PAGE),
    "comments": COMMENT_FIELDS,
    "closingIssuesReferences": "number",
}


def pull_request_connection_page(connection: str) -> str:
    nodes = CONNECTION_NODES[connection]
    return (
        "query PullRequestConnectionPage($owner: String!, $name: String!, $number: Int!, $after: String) {\n"
        "  repository(owner: $owner, name: $name) {\n"
        f"    pullRequest(number: $number) {{ {connection}(first: {FOLLOWUP_PAGE}, after: $after) {{ {PAGE_INFO} nodes {{ {nodes} }} }} }}\n"
        "  }\n"
        f"  {RATE_LIMIT}\n"
        "}\n"
    )


THREAD_COMMENTS_PAGE_QUERY = (
    "query ReviewThreadCommentsPage($id: ID!, $after: String) {\n"
    "  node(id: $id) {\n"
    f"    ... on PullRequestReviewThread {{ comments(first: {FOLLOWUP_PAGE}, after: $after) {{ {PAGE_INFO} nodes {{ {THREAD_COMMENT_FIELDS} }} }} }}\n"
    "  }\n"
    f"  {RATE_LIMIT}\n"
    "}\n"
)


def earlier_pull_request_counts(count: int) -> str:
    """One document with `count` aliased searches (`a0`, `a1`, …): how many PRs each
    author had merged before a moment (only the count is selected)."""
    params = ", ".join(f"$q{i}: String!" for i in range(count))
    fields = "\n  ".join(f"a{i}: search(query: $q{i}, type: ISSUE, first: 1) {{ issueCount }}" for i in range(count))
    return f"query EarlierPullRequestCounts({params}) {{\n  {fields}\n  {RATE_LIMIT}\n}}\n"
