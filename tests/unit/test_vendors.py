"""Reviewer independence in-process: the vendor table (sourced, versioned, one real id per entry),
the policy's additions (vendors and model aliases), and every answer of `independence.failures`.
How model ids are read: tests/unit/test_modelnames.py."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gatecore.adapters.config import load_model_names, load_vendor_table
from gatecore.checks.independence import Author, failures
from gatecore.configuration.configschema import parse_vendor_table, validate_policy
from gatecore.configuration.modelnames import ModelName, ModelNames
from gatecore.configuration.policy import Policy
from gatecore.configuration.vendors import merged, vendors_of
from gatecore.errors import GateError

TABLE = load_vendor_table()
ROWS = [(g, v, o) for g, v, o in merged(TABLE, {})]
MODELS = load_model_names()
NAMES = ModelNames.from_plain(MODELS.plain)


def vendors(model_id: str, rows: object = ROWS, names: ModelNames = NAMES) -> dict[str, str]:
    """The vendors of a model id, read by the model-id table."""
    found = names.read(model_id)
    assert isinstance(found, ModelName), found
    return vendors_of(found.canonical, rows)  # type: ignore[arg-type]

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
    "ai21": ["ai21.jamba-1-5-large-v1:0", "jamba-large"],
    "writer": ["us.writer.palmyra-x5-v1:0", "writer.palmyra-x4-v1:0"],
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
    assert list(vendors(model)) == [vendor]


def test_a_model_two_vendors_made_is_of_both_and_an_unknown_one_of_none() -> None:
    assert set(vendors("MAI-DS-R1")) == {"deepseek", "microsoft"}  # DeepSeek-R1, post-trained
    assert vendors_of("acme-coder-1", ROWS) == {} and vendors_of("model-a", ROWS) == {}


ENTRY = 'version = "1"\n[[vendor]]\nid = "x"\nname = "X"\nchecked = "2026-01-01"\nsources = {sources}\nmodels = ["x-*"]\n'


@pytest.mark.parametrize("text,said", [
    (ENTRY.format(sources="[]"), "v.toml:6: vendor[0].sources: must not be empty"),
    (ENTRY.format(sources='["https://x"]') + 'owner = "y"\n', "v.toml:8: vendor[0].owner: unknown key"),
    (ENTRY.format(sources='["https://x"]').replace('"x"', '"X"', 1), "v.toml:3: vendor[0].id: 'X' holds characters"),
    ('version = "1"\n', "v.toml: vendor: vendor is required here"),
    (ENTRY.format(sources='["https://x"]') + ENTRY.format(sources='["https://x"]').split("\n", 1)[1],
     "v.toml:9: vendor[1].id: 'x' is listed twice"),
])
def test_a_malformed_table_is_refused_in_one_line(text: str, said: str) -> None:
    assert parse_vendor_table(ENTRY.format(sources='["https://x"]').encode(), "v.toml").vendors[0].models == ("x-*",)
    with pytest.raises(GateError) as err:
        parse_vendor_table(text.encode(), "v.toml")
    assert err.value.code == "GATE-CONFIG-POLICY" and said in err.value.detail, err.value.detail


# --- the policy -----------------------------------------------------------------------------

def policy(text: str) -> Policy:
    return Policy.from_plain(validate_policy(text.encode(), "policy.toml", None, TABLE, MODELS))


def test_the_policy_adds_to_the_table_before_it_and_only_under_vendor() -> None:
    p = policy('[review]\nindependent = "vendor"\n[review.vendors]\nacme = ["Acme.Coder-*", "claude-*"]\n')
    assert p.vendor_table_version == TABLE.version
    assert vendors_of("acme-coder-7", p.review_vendors) == {"acme": "the policy's [review.vendors]"}
    assert set(vendors_of("claude-opus-4-1", p.review_vendors)) == {"acme", "anthropic"}  # adds, never replaces
    off = policy('[review.vendors]\nacme = ["acme-*"]\n')
    assert (off.independent, off.review_vendors, off.vendor_table_version) == ("off", (), None)
    assert off.model_reader() is None  # the hook reads no model id under "off"


def test_policy_check_says_how_model_ids_are_read() -> None:
    from gatecore.configuration.policyreport import describe

    p = policy('[review]\nindependent = "model"\n[review.models]\n"azure/team-gpt" = "gpt-5"\n')
    [line] = [x for x in describe(p) if "review.independent" in x]
    assert f"model-id table {MODELS.version} and the policy's [review.models] (1)" in line
    reader = p.model_reader()
    assert reader is not None and getattr(reader.read("AZURE/team-gpt"), "canonical", None) == "gpt-5"


@pytest.mark.parametrize("text,said", [
    ('[review]\nindependent = "vendors"\n', "review.independent: 'vendors' is not one of 'off', 'model', 'vendor': "
                                           "did you mean 'vendor'?"),
    ('[review.vendors]\nAcme = ["acme-*"]\n', "review.vendors.Acme"),
    ('[review.vendors]\nacme = []\n', "review.vendors.acme: must not be empty"),
    ('[review]\nindependant = "model"\n', "review.independant: unknown key: did you mean independent?"),
    ('[review.models]\n"azure/x" = "gtp-5"\n', "policy.toml:2: review.models.\"azure/x\": 'gtp-5' is placed by no "
                                               "model-id scheme (a word no model family's names begin with (here: gtp)): "
                                               "name a model the model-id table"),
    ('[review.models]\n"azure/x" = "azure/y"\n', "review.models.\"azure/x\": 'azure/y' is placed by no model-id scheme "
                                                 "(a deployment, named by its owner"),
    ('[review.models]\n"x" = ""\n', "review.models.x: must not be empty"),
])
def test_policy_mistakes_are_said_in_the_admins_words(text: str, said: str) -> None:
    with pytest.raises(GateError) as err:
        policy(text)
    assert err.value.code == "GATE-CONFIG-POLICY" and said in err.value.detail, err.value.detail


# --- the decision -----------------------------------------------------------------------------

CLAUDE = Author("claude-sonnet-4-5-20250929")


def codes(setting: str, author: Author, reviewer: str, rows: list[tuple[str, str, str]] = ROWS,
          names: ModelNames = NAMES) -> list[str]:
    return [f.code for f in failures(setting, author, reviewer, rows, names)]


#: A policy that names two models of its own and an Azure deployment ([review.models]).
OWN = ModelNames.from_plain(MODELS.plain, {"my-finetune": "my-finetune", "acme-coder-1": "acme-coder-1",
                                           "azure/team-claude": "claude-sonnet-4-5"})


@pytest.mark.parametrize("setting,author,reviewer,expected", [
    ("off", Author(None), "claude-sonnet-4-5", []),
    ("off", CLAUDE, "anthropic/claude-sonnet-4.5", []),
    ("model", Author(None), "gpt-5", ["GATE-REVIEW-AUTHOR-UNKNOWN"]),
    ("vendor", Author(None, "anthropic"), "gpt-5", ["GATE-REVIEW-AUTHOR-UNKNOWN"]),
    ("model", CLAUDE, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", ["GATE-REVIEW-SAME-MODEL"]),
    ("model", CLAUDE, "claude-4.5-sonnet", ["GATE-REVIEW-SAME-MODEL"]),  # Cursor's word order
    ("model", Author("deepseek/deepseek-r1"), "us.deepseek.r1-v1:0", ["GATE-REVIEW-SAME-MODEL"]),  # Bedrock's name
    ("vendor", Author("deepseek/deepseek-r1"), "us.deepseek.r1-v1:0", ["GATE-REVIEW-SAME-MODEL"]),
    ("vendor", Author("deepseek/deepseek-r1"), "deepseek.v3-v1:0", ["GATE-REVIEW-SAME-VENDOR"]),
    ("vendor", CLAUDE, "us.deepseek.r1-v1:0", []),  # another vendor's model, read as one
    ("model", CLAUDE, "claude-opus-4-1", []),  # another model, same vendor: "model" asks no more
    ("model", CLAUDE, "sonnet", ["GATE-REVIEW-SAME-MODEL"]),  # Claude Code's alias: whichever Sonnet
    ("model", CLAUDE, "azure/team-claude", ["GATE-REVIEW-MODEL-UNPLACED"]),  # a deployment no policy names
    ("model", CLAUDE, "acme-coder-1", ["GATE-REVIEW-MODEL-UNPLACED"]),  # never taken for a model of its own
    ("model", Author("my-gpt5-deployment"), "gpt-5", ["GATE-REVIEW-MODEL-UNPLACED"]),
    ("vendor", Author("my-finetune"), "acme-coder-1", ["GATE-REVIEW-MODEL-UNPLACED"] * 2),  # both sides said
    ("vendor", CLAUDE, "anthropic/claude-sonnet-4.5", ["GATE-REVIEW-SAME-MODEL"]),
    ("vendor", CLAUDE, "claude-opus-4-1", ["GATE-REVIEW-SAME-VENDOR"]),
    ("vendor", CLAUDE, "gpt-5", []),
    ("vendor", CLAUDE, "MAI-DS-R1", []),
    ("vendor", Author("deepseek-chat"), "MAI-DS-R1", ["GATE-REVIEW-SAME-VENDOR"]),  # either of its vendors
    ("vendor", Author("claude-sonnet-4-5", "openai"), "gpt-5", ["GATE-REVIEW-SAME-VENDOR"]),  # recorded: only adds
    ("vendor", Author("claude-sonnet-4-5", "openai"), "claude-opus-4-1", ["GATE-REVIEW-SAME-VENDOR"]),
])
def test_independence(setting: str, author: Author, reviewer: str, expected: list[str]) -> None:
    assert codes(setting, author, reviewer) == expected


@pytest.mark.parametrize("setting,author,reviewer,expected", [
    ("model", CLAUDE, "azure/team-claude", ["GATE-REVIEW-SAME-MODEL"]),  # the policy says what it serves
    ("model", CLAUDE, "acme-coder-1", []),  # a model of its own: another model
    ("model", Author("acme-coder-1"), "ACME-CODER-1", ["GATE-REVIEW-SAME-MODEL"]),
    ("vendor", CLAUDE, "acme-coder-1", ["GATE-REVIEW-VENDOR-UNKNOWN"]),  # its vendor: [review.vendors]
    ("vendor", Author("my-finetune"), "acme-coder-1", ["GATE-REVIEW-VENDOR-UNKNOWN"] * 2),  # both sides said
    ("vendor", Author("my-finetune", "openai"), "gpt-5", ["GATE-REVIEW-SAME-VENDOR"]),  # the recorded vendor
    ("vendor", Author("my-finetune", "acme"), "gpt-5", []),
])
def test_independence_with_the_policys_model_names(setting: str, author: Author, reviewer: str,
                                                   expected: list[str]) -> None:
    assert codes(setting, author, reviewer, names=OWN) == expected


def test_without_a_model_id_table_no_id_is_placed() -> None:
    assert codes("model", CLAUDE, "gpt-5", names=None) == ["GATE-REVIEW-MODEL-UNPLACED"] * 2  # type: ignore[arg-type]


def test_the_refusal_names_both_models_and_where_their_vendor_came_from() -> None:
    [f] = failures("vendor", CLAUDE, "us.anthropic.claude-opus-4-1-20250805-v1:0", ROWS, NAMES)
    assert f.field == "model_id"
    assert f.detail == (f"the reviewing model us.anthropic.claude-opus-4-1-20250805-v1:0 is anthropic's (vendor table "
                        f"{TABLE.version}), and so is the model that wrote the change, claude-sonnet-4-5-20250929 "
                        f"(vendor table {TABLE.version})")
