"""Reviewer independence in-process: the vendor table (sourced, versioned, one real id per entry),
canonical model ids, the policy's additions, and every answer of `independence.failures`."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from gatecore.adapters.config import load_vendor_table
from gatecore.configschema import validate_policy
from gatecore.errors import GateError
from gatecore.independence import Author, failures
from gatecore.policy import Policy
from gatecore.vendors import canonical_model, merged, parse, vendors_of

TABLE = load_vendor_table()
ROWS = [(g, v, o) for g, v, o in merged(TABLE, {})]

#: Real ids of each vendor's models, as its own API, a cloud host or a router spells them.
REAL_IDS = {
    "anthropic": ["claude-sonnet-4-5-20250929", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                  "anthropic/claude-sonnet-4.5", "claude-opus-4-1@20250805", "claude-3-5-haiku-latest"],
    "openai": ["gpt-5", "gpt-4.1-2025-04-14", "o3", "o4-mini", "codex-mini-latest", "gpt-oss-120b-maas",
               "openrouter/openai/gpt-5:nitro", "chatgpt-4o-latest", "gpt-5.1-codex-max"],
    "google": ["gemini-2.5-pro", "publishers/google/models/gemini-1.5-pro-001", "gemini-3-pro-preview",
               "google/gemma-2-27b-it"],
    "xai": ["grok-4", "x-ai/grok-code-fast-1"],
    "mistral": ["mistral-large-latest", "codestral-latest", "devstral-medium-2507", "mistral.mistral-large-2407-v1:0",
                "magistral-small", "open-mistral-nemo"],
    "meta": ["meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta.llama4-scout-17b-instruct-v1:0",
             "llama-3.3-70b-versatile"],
    "deepseek": ["deepseek-chat", "deepseek-reasoner", "deepseek/deepseek-coder", "deepseek.r1-v1:0"],
    "alibaba": ["qwen3-coder-plus", "qwen/qwen3-coder", "qwen-max-2025-01-25", "qwq-plus", "Qwen2.5-Coder-32B-Instruct"],
    "amazon": ["amazon.nova-pro-v1:0", "us.amazon.nova-premier-v1:0"],
    "cohere": ["command-a-03-2025", "cohere/command-r-08-2024", "CohereLabs/c4ai-command-a-03-2025"],
    "moonshot": ["kimi-k2-0905-preview", "moonshot-v1-128k", "moonshotai/kimi-k2-instruct"],
    "zhipu": ["zai/glm-4.6", "glm-4.5-air"],
    "microsoft": ["microsoft/Phi-4", "phi-4-mini-instruct"],
    "minimax": ["MiniMax-M2", "minimax-m2-maas"],
}


def test_the_table_is_versioned_and_every_entry_has_a_checked_source() -> None:
    assert TABLE.version and {v.id for v in TABLE.vendors} == set(REAL_IDS)
    for v in TABLE.vendors:
        assert v.sources and all(s.startswith("https://") for s in v.sources), v.id
        assert dt.date.fromisoformat(v.checked) <= dt.date.today()


def test_the_shipped_table_is_documented_entry_by_entry() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "receipts.md").read_text()
    assert f"### The vendor table ({TABLE.version})" in doc
    for v in TABLE.vendors:
        assert f"(`{v.id}`)" in doc and all(f"`{m}`" in doc for m in v.models) and all(s in doc for s in v.sources)


@pytest.mark.parametrize("vendor,model", [(v, m) for v, ms in REAL_IDS.items() for m in ms])
def test_a_real_id_of_each_vendor_is_that_vendors_alone(vendor: str, model: str) -> None:
    assert list(vendors_of(model, ROWS)) == [vendor]


def test_a_model_two_vendors_made_is_of_both_and_an_unknown_one_of_none() -> None:
    assert set(vendors_of("MAI-DS-R1", ROWS)) == {"deepseek", "microsoft"}  # DeepSeek-R1, post-trained
    assert vendors_of("acme-coder-1", ROWS) == {} and vendors_of("model-a", ROWS) == {}


@pytest.mark.parametrize("ids", [
    ("claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4.5", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
     "claude-sonnet-4-5@20250929", "publishers/anthropic/models/claude-sonnet-4-5", "CLAUDE_SONNET_4_5"),
    ("gpt-4o-2024-08-06", "gpt-4o", "openai/gpt-4o", "gpt-4o:nitro"),
    ("gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash", "gemini-2.5-flash-001"),
    ("gpt-oss-120b", "gpt-oss-120b-maas", "openai/gpt-oss-120b"),
])
def test_aliases_of_one_model_read_alike(ids: tuple[str, ...]) -> None:
    assert len({canonical_model(m) for m in ids}) == 1, [canonical_model(m) for m in ids]


@pytest.mark.parametrize("a,b", [("gpt-5", "gpt-5-mini"), ("claude-sonnet-4-5", "claude-opus-4-1"),
                                 ("o3", "o3-mini"), ("gemini-2.5-pro", "gemini-2.5-flash")])
def test_different_models_stay_apart(a: str, b: str) -> None:
    assert canonical_model(a) != canonical_model(b)


ENTRY = 'version = "1"\n[[vendor]]\nid = "x"\nname = "X"\nchecked = "2026-01-01"\nsources = {sources}\nmodels = ["x-*"]\n'


@pytest.mark.parametrize("text,said", [
    (ENTRY.format(sources="[]"), "vendor 0: sources must not be empty"),
    (ENTRY.format(sources='["https://x"]') + 'owner = "y"\n', "vendor 0: unknown keys ['owner']"),
    (ENTRY.format(sources='["https://x"]').replace('"x"', '"X"', 1), "vendor 0: id must be lower-case"),
    ('version = "1"\n', "needs a version and at least one [[vendor]]"),
])
def test_a_malformed_table_is_refused_in_one_line(text: str, said: str) -> None:
    assert parse(ENTRY.format(sources='["https://x"]').encode()).vendors[0].models == ("x-*",)
    with pytest.raises(ValueError, match=re.escape(said)):
        parse(text.encode())


# --- the policy -----------------------------------------------------------------------------

def policy(text: str) -> Policy:
    return Policy.from_plain(validate_policy(text.encode(), "policy.toml", None, TABLE))


def test_the_policy_adds_to_the_table_before_it_and_only_under_vendor() -> None:
    p = policy('[review]\nindependent = "vendor"\n[review.vendors]\nacme = ["Acme.Coder-*", "claude-*"]\n')
    assert p.vendor_table_version == TABLE.version
    assert vendors_of("acme.coder-7", p.review_vendors) == {"acme": "the policy's [review.vendors]"}
    assert set(vendors_of("claude-opus-4-1", p.review_vendors)) == {"acme", "anthropic"}  # adds, never replaces
    off = policy('[review.vendors]\nacme = ["acme-*"]\n')
    assert (off.independent, off.review_vendors, off.vendor_table_version) == ("off", (), None)


@pytest.mark.parametrize("text,said", [
    ('[review]\nindependent = "vendors"\n', "review.independent: 'vendors' is not one of 'off', 'model', 'vendor': "
                                           "did you mean 'vendor'?"),
    ('[review.vendors]\nAcme = ["acme-*"]\n', "review.vendors.Acme"),
    ('[review.vendors]\nacme = []\n', "review.vendors.acme: must not be empty"),
    ('[review]\nindependant = "model"\n', "review.independant: unknown key: did you mean independent?"),
])
def test_policy_mistakes_are_said_in_the_admins_words(text: str, said: str) -> None:
    with pytest.raises(GateError) as err:
        policy(text)
    assert err.value.code == "GATE-CONFIG-POLICY" and said in err.value.detail, err.value.detail


# --- the decision -----------------------------------------------------------------------------

CLAUDE = Author("claude-sonnet-4-5-20250929")


def codes(setting: str, author: Author, reviewer: str, rows: list[tuple[str, str, str]] = ROWS) -> list[str]:
    return [f.code for f in failures(setting, author, reviewer, rows)]


@pytest.mark.parametrize("setting,author,reviewer,expected", [
    ("off", Author(None), "claude-sonnet-4-5", []),
    ("off", CLAUDE, "anthropic/claude-sonnet-4.5", []),
    ("model", Author(None), "gpt-5", ["GATE-REVIEW-AUTHOR-UNKNOWN"]),
    ("vendor", Author(None, "anthropic"), "gpt-5", ["GATE-REVIEW-AUTHOR-UNKNOWN"]),
    ("model", CLAUDE, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", ["GATE-REVIEW-SAME-MODEL"]),
    ("model", CLAUDE, "claude-opus-4-1", []),  # another model, same vendor: "model" asks no more
    ("model", CLAUDE, "acme-coder-1", []),  # nor needs a vendor
    ("vendor", CLAUDE, "anthropic/claude-sonnet-4.5", ["GATE-REVIEW-SAME-MODEL"]),
    ("vendor", CLAUDE, "claude-opus-4-1", ["GATE-REVIEW-SAME-VENDOR"]),
    ("vendor", CLAUDE, "gpt-5", []),
    ("vendor", CLAUDE, "MAI-DS-R1", []),
    ("vendor", Author("deepseek-chat"), "MAI-DS-R1", ["GATE-REVIEW-SAME-VENDOR"]),  # either of its vendors
    ("vendor", CLAUDE, "acme-coder-1", ["GATE-REVIEW-VENDOR-UNKNOWN"]),
    ("vendor", Author("my-finetune"), "acme-coder-1", ["GATE-REVIEW-VENDOR-UNKNOWN"] * 2),  # both sides said
    ("vendor", Author("my-finetune", "openai"), "gpt-5", ["GATE-REVIEW-SAME-VENDOR"]),  # the recorded vendor
    ("vendor", Author("my-finetune", "acme"), "gpt-5", []),
    ("vendor", Author("claude-sonnet-4-5", "openai"), "gpt-5", ["GATE-REVIEW-SAME-VENDOR"]),  # recorded: only adds
    ("vendor", Author("claude-sonnet-4-5", "openai"), "claude-opus-4-1", ["GATE-REVIEW-SAME-VENDOR"]),
])
def test_independence(setting: str, author: Author, reviewer: str, expected: list[str]) -> None:
    assert codes(setting, author, reviewer) == expected


def test_the_refusal_names_both_models_and_where_their_vendor_came_from() -> None:
    [f] = failures("vendor", CLAUDE, "us.anthropic.claude-opus-4-1-20250805-v1:0", ROWS)
    assert f.field == "model_id"
    assert f.detail == (f"the reviewing model us.anthropic.claude-opus-4-1-20250805-v1:0 is anthropic's (vendor table "
                        f"{TABLE.version}), and so is the model that wrote the change, claude-sonnet-4-5-20250929 "
                        f"(vendor table {TABLE.version})")
