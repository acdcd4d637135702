"""Answer repobrief's exported per-PR requests with Ray Data: vLLM on GPU nodes, or
any OpenAI-compatible endpoint.

The whole round trip (see docs/scaling.md, "Batch analysis on the cluster"):

    repobrief batch export --config team.toml --week last --llm-model qwen2.5-7b --out requests.jsonl
    python examples/ray_data_vllm.py requests.jsonl --out results.jsonl \\
        --model Qwen/Qwen2.5-7B-Instruct --replicas 4 --accelerator A10G      # on the Ray cluster
    repobrief batch import results.jsonl --db postgresql://…
    repobrief run --config team.toml --week last        # only the composition requests are sent

Input: the OpenAI Batch API input rows `repobrief batch export` writes
(`custom_id`, `method`, `url`, `body`). Output: Batch API output rows
(`custom_id`, `response: {status_code, body: <chat completion>}`, `error`), one
per input row, which `repobrief batch import` stores under their custom_id.

Two ways to answer:

- **vLLM on the cluster's GPUs** (default): `ray.data.llm`'s vLLM processor, one
  engine per replica. The request's response format becomes vLLM structured
  output (the JSON Schema, or any JSON object), so answers parse. Needs
  `pip install 'ray[data,llm]'` (which brings vLLM) on the cluster.
- **`--endpoint URL`**: each row is POSTed to URL/chat/completions from Ray Data
  `map_batches` tasks — a vLLM or SGLang fleet that is already serving, a hosted
  API, or no GPUs at all. The key, if any, is read from the variable named by
  `--api-key-env` on the driver and never printed.

The file is read with `ray.data.read_text` and each line parsed here: reading it
with `read_json` would turn the request bodies' nested JSON Schemas into Arrow
structs, and back into dictionaries with keys the schema never had.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request

RETRY_STATUS = (408, 409, 429, 500, 502, 503, 504)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Answer `repobrief batch export` requests with Ray Data (vLLM on GPUs, or an OpenAI-compatible endpoint).",
    )
    p.add_argument("requests", help="the requests file written by `repobrief batch export` (JSON Lines)")
    p.add_argument("--out", required=True, help="results file to write (JSON Lines), for `repobrief batch import`")
    p.add_argument("--address", default=None, help="Ray cluster address ('auto', ray://HEAD:10001); default: Ray's own choice")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of a local Ray started by this script (default: all)")
    g = p.add_argument_group("vLLM on the cluster (default)")
    g.add_argument("--model", help="model to load in vLLM (a Hugging Face id or a path), e.g. Qwen/Qwen2.5-7B-Instruct")
    g.add_argument("--replicas", type=int, default=1, help="vLLM engines (data parallel), each on its own GPU(s)")
    g.add_argument("--tensor-parallel", type=int, default=1, help="GPUs per vLLM engine")
    g.add_argument("--accelerator", default=None, help="Ray accelerator type of the GPU nodes, e.g. A10G, L4, H100")
    g.add_argument("--max-model-len", type=int, default=16384, help="context length (a PR prompt is ≤ ~3,000 tokens plus the schema)")
    g.add_argument("--max-tokens", type=int, default=2048, help="longest answer")
    g.add_argument("--batch-size", type=int, default=32, help="rows per batch handed to an engine or an endpoint task")
    e = p.add_argument_group("an OpenAI-compatible endpoint instead")
    e.add_argument("--endpoint", default=None, help="base URL, e.g. http://vllm-0:8000/v1; rows are sent from Ray tasks")
    e.add_argument("--api-key-env", default="OPENAI_API_KEY", help="NAME of the variable holding the endpoint's key (default OPENAI_API_KEY)")
    e.add_argument("--concurrency", type=int, default=2, help="Ray tasks sending at once")
    e.add_argument("--threads", type=int, default=8, help="requests in flight per task")
    e.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    args = p.parse_args(argv)
    if not args.endpoint and not args.model:
        p.error("give --model (vLLM on the cluster) or --endpoint URL")
    return args


# ------------------------------------------------------------------ rows


def parse_line(row: dict) -> list[dict]:
    """A line of the requests file → [{custom_id, body (JSON text)}] ([] for a blank
    line); the body stays text so that Arrow never reshapes it."""
    if not row["text"].strip():
        return []
    req = json.loads(row["text"])
    return [{"custom_id": req["custom_id"], "body": json.dumps(req["body"], ensure_ascii=False)}]


def output_row(custom_id: str, status: int | None, body: dict | None, error: str | None = None) -> dict:
    """One Batch API output row (the shape vLLM's run-batch and the OpenAI Batch API write)."""
    if error is not None or status is None:
        return {"id": f"batch_req_{custom_id[:24]}", "custom_id": custom_id, "response": None,
                "error": {"code": "request_failed", "message": error or "no answer"}}
    return {"id": f"batch_req_{custom_id[:24]}", "custom_id": custom_id,
            "response": {"status_code": status, "request_id": f"req_{custom_id[:24]}", "body": body}, "error": None}


def to_vllm_row(row: dict, max_tokens: int) -> dict:
    """A request → what the vLLM processor reads: messages and sampling parameters,
    the response format as vLLM structured output (the schema as JSON text)."""
    body = json.loads(row["body"])
    structured: dict = {}
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        structured = {"json": json.dumps(fmt["json_schema"]["schema"])}
    elif fmt.get("type") == "json_object":
        structured = {"json_object": True}
    elif body.get("tools"):  # a forced function call: its parameters are the schema
        structured = {"json": json.dumps(body["tools"][0]["function"]["parameters"])}
    params: dict = {"temperature": float(body.get("temperature", 0) or 0), "max_tokens": max_tokens}
    if structured:
        params["structured_outputs"] = structured
    return {"custom_id": row["custom_id"], "request_model": body["model"], "messages": body["messages"], "sampling_params": params}


def from_vllm_row(row: dict) -> dict:
    """A vLLM processor output row → {"line": a Batch API output row as JSON text}."""
    error = row.get("__inference_error__") or ""
    custom_id = row["custom_id"]
    if error:
        return {"line": json.dumps(output_row(custom_id, None, None, str(error)[:500]), ensure_ascii=False)}
    prompt_tokens = int(row.get("num_input_tokens") or 0)
    completion_tokens = int(row.get("num_generated_tokens") or 0)
    body = {
        "id": f"chatcmpl-{custom_id[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": row.get("request_model") or "",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": row.get("generated_text") or ""}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    }
    return {"line": json.dumps(output_row(custom_id, 200, body), ensure_ascii=False)}


def post_chat(endpoint: str, body: str, api_key: str, timeout: float, attempts: int = 4) -> tuple[int | None, dict | None, str | None]:
    """POST one request; (status, response body, error). 429, 5xx and connection
    errors are retried with backoff; other statuses are answers to record."""
    url = endpoint.rstrip("/") + "/chat/completions"
    headers = {"content-type": "application/json"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    last = "no answer"
    for attempt in range(attempts):
        if attempt:
            time.sleep(min(8.0, 0.5 * 2 ** (attempt - 1)))
        req = urllib.request.Request(url, data=body.encode("utf-8"), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, json.loads(resp.read()), None
        except urllib.error.HTTPError as e:
            raw = e.read()
            if e.code in RETRY_STATUS and attempt + 1 < attempts:
                last = f"HTTP {e.code}"
                continue
            try:
                return e.code, json.loads(raw), None
            except ValueError:
                return e.code, {"error": {"message": raw[:300].decode("utf-8", "replace")}}, None
        except (urllib.error.URLError, TimeoutError, ConnectionError, ValueError) as e:
            last = f"{type(e).__name__}: {getattr(e, 'reason', e)}"
    return None, None, f"{last} after {attempts} attempts"


def call_endpoint(batch: dict, endpoint: str, api_key: str, timeout: float, threads: int) -> dict:
    """A Ray Data batch (columns custom_id, body) → {"line": Batch API output rows}."""
    from concurrent.futures import ThreadPoolExecutor

    ids, bodies = list(batch["custom_id"]), list(batch["body"])
    with ThreadPoolExecutor(max(1, min(threads, len(ids)))) as pool:
        answers = list(pool.map(lambda b: post_chat(endpoint, b, api_key, timeout), bodies))
    lines = [json.dumps(output_row(i, status, body, error), ensure_ascii=False) for i, (status, body, error) in zip(ids, answers, strict=True)]
    return {"line": lines}


# ------------------------------------------------------------------ pipelines


def answer_with_endpoint(ds, args):
    api_key = os.environ.get(args.api_key_env, "") if args.api_key_env else ""
    return ds.map_batches(
        call_endpoint,
        batch_size=args.batch_size,
        concurrency=args.concurrency,
        fn_kwargs={"endpoint": args.endpoint, "api_key": api_key, "timeout": args.timeout, "threads": args.threads},
    )


def answer_with_vllm(ds, args):
    import ray.data.llm as rdl

    build = getattr(rdl, "build_processor", None) or rdl.build_llm_processor  # renamed in Ray 2.5x
    config = rdl.vLLMEngineProcessorConfig(
        model_source=args.model,
        engine_kwargs={
            "max_model_len": args.max_model_len,
            "enable_prefix_caching": True,  # every PR prompt starts with the same instructions and schema
            "tensor_parallel_size": args.tensor_parallel,
        },
        concurrency=args.replicas,
        batch_size=args.batch_size,
        accelerator_type=args.accelerator,
        should_continue_on_error=True,  # a failed row becomes an error row, not a failed job
    )
    max_tokens = args.max_tokens
    processor = build(config, preprocess=lambda row: to_vllm_row(row, max_tokens))
    # Error rows skip a processor's postprocess, so the Batch rows are made after it.
    return processor(ds).map(from_vllm_row)


def run(args) -> tuple[int, int]:
    """Read, answer, write. Returns (rows written, rows with an error or a non-200 status)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=args.address, num_cpus=args.num_cpus if not args.address else None, log_to_driver=False)
    ds = ray.data.read_text(os.path.abspath(args.requests)).flat_map(parse_line)
    ds = answer_with_endpoint(ds, args) if args.endpoint else answer_with_vllm(ds, args)
    tmp = args.out + ".tmp"
    written = failed = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in ds.iter_rows():  # streamed: the driver holds one block at a time
            line = row["line"]
            out = json.loads(line)
            failed += out["error"] is not None or out["response"]["status_code"] != 200
            fh.write(line + "\n")
            written += 1
    os.replace(tmp, args.out)
    return written, failed


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not os.path.exists(args.requests):
        print(f"error: no such file: {args.requests}", file=sys.stderr)
        return 2
    written, failed = run(args)
    print(f"wrote {written} results to {args.out}" + (f" ({failed} failed)" if failed else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
