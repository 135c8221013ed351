"""Model ids read by their providers' naming schemes (gatecore/configuration/modelnames.py, gatecore/data/models.toml):
a corpus of real ids as the providers list them, each read to its model; names of different models
kept apart; ids no scheme places refused, never taken for a model of their own; the table sourced,
dated and documented entry by entry."""

from __future__ import annotations

import datetime as dt
import re
from itertools import combinations
from pathlib import Path

import pytest

from gatecore.adapters.config import load_model_names, load_vendor_table
from gatecore.configuration.configschema import parse_model_names
from gatecore.configuration.modelnames import ModelName, ModelNames, Unplaced
from gatecore.configuration.vendors import merged, vendors_of
from gatecore.errors import GateError

TABLE = load_model_names()
NAMES = ModelNames.from_plain(TABLE.plain)
ROWS = [(g, v, o) for g, v, o in merged(load_vendor_table(), {})]

#: Real ids, as each provider lists them (the sources of gatecore/data/models.toml), by the model
#: they name: canonical form -> (vendor, ids).
CORPUS: dict[str, tuple[str, list[str]]] = {
    "claude-sonnet-4-5": ("anthropic", [
        "claude-sonnet-4-5-20250929", "claude-sonnet-4-5",  # Claude API id and alias
        "anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",  # Bedrock
        "global.anthropic.claude-sonnet-4-5-20250929-v1:0", "jp.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0",
        "claude-sonnet-4-5@20250929", "publishers/anthropic/models/claude-sonnet-4-5@20250929",  # Vertex
        "projects/p-1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929",
        "anthropic/claude-sonnet-4.5", "openrouter/anthropic/claude-sonnet-4.5",  # OpenRouter, LiteLLM
        "claude-4.5-sonnet", "claude-sonnet-4-5-20250929-thinking", "CLAUDE_SONNET_4_5",  # IDEs and agents
        "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5[1m]"]),
    "claude-opus-4-1": ("anthropic", [
        "claude-opus-4-1-20250805", "anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1@20250805",
        "anthropic/claude-opus-4.1", "claude-4.1-opus"]),
    "claude-opus-4": ("anthropic", ["claude-opus-4-20250514", "claude-opus-4-0", "claude-opus-4@20250514",
                                    "anthropic/claude-opus-4"]),
    "claude-opus-4-6": ("anthropic", ["claude-opus-4-6", "anthropic.claude-opus-4-6-v1",
                                      "eu.anthropic.claude-opus-4-6-v1", "claude-opus-4-6-thinking"]),
    "claude-sonnet-4-6": ("anthropic", ["claude-sonnet-4-6", "anthropic.claude-sonnet-4-6",
                                        "global.anthropic.claude-sonnet-4-6", "anthropic/claude-sonnet-4.6"]),
    "claude-haiku-4-5": ("anthropic", ["claude-haiku-4-5-20251001", "anthropic.claude-haiku-4-5-20251001-v1:0",
                                       "claude-haiku-4-5@20251001", "anthropic/claude-haiku-4.5"]),
    "claude-sonnet-3-7": ("anthropic", ["claude-3-7-sonnet-20250219", "claude-3-7-sonnet@20250219",
                                        "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "anthropic/claude-3.7-sonnet",
                                        "claude-3.7-sonnet"]),
    "claude-sonnet-3-5": ("anthropic", ["claude-3-5-sonnet-20241022", "claude-3-5-sonnet-v2@20241022",
                                        "anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3.5-sonnet"]),
    "claude-haiku-3": ("anthropic", ["claude-3-haiku-20240307", "claude-3-haiku@20240307",
                                     "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0"]),
    "claude-fable-5-1": ("anthropic", ["claude-fable-5-1"]),
    "claude-sonnet": ("anthropic", ["sonnet", "sonnet[1m]"]),  # Claude Code: the latest Sonnet, whichever
    "claude-opus": ("anthropic", ["opus"]),
    "gpt-5": ("openai", ["gpt-5", "gpt-5-2025-08-07", "openai/gpt-5", "openrouter/openai/gpt-5:nitro", "gpt-5-high",
                         "gpt-5-chat-latest"]),
    "gpt-5-mini": ("openai", ["gpt-5-mini", "openai/gpt-5-mini", "gpt-5-mini-2025-08-07"]),
    "gpt-5-1-codex-max": ("openai", ["gpt-5.1-codex-max", "openai/gpt-5.1-codex-max"]),
    "gpt-5-3-codex-spark": ("openai", ["gpt-5.3-codex-spark", "gpt-5.3-codex-spark-preview-xhigh",
                                       "gpt-5.3-codex-spark-preview-low"]),
    "gpt-4o": ("openai", ["gpt-4o", "gpt-4o-2024-08-06", "chatgpt-4o-latest", "openai/gpt-4o", "gpt-4o:nitro"]),
    "gpt-4-1": ("openai", ["gpt-4.1", "gpt-4.1-2025-04-14", "openai/gpt-4.1"]),
    "gpt-oss-120b": ("openai", ["gpt-oss-120b", "openai/gpt-oss-120b", "gpt-oss-120b-maas", "openai.gpt-oss-120b-1:0",
                                "openai/gpt-oss-120b:free"]),
    "o3": ("openai", ["o3", "o3-2025-04-16", "openai/o3"]),
    "o4-mini": ("openai", ["o4-mini", "o4-mini-2025-04-16", "openai/o4-mini"]),
    "codex-mini": ("openai", ["codex-mini-latest"]),
    "gemini-2-5-pro": ("google", ["gemini-2.5-pro", "google/gemini-2.5-pro", "gemini-2.5-pro-preview-05-06",
                                  "google/gemini-2.5-pro-preview-06-05", "publishers/google/models/gemini-2.5-pro"]),
    "gemini-2-5-flash": ("google", ["gemini-2.5-flash", "gemini-2.5-flash-preview-09-2025", "google/gemini-2.5-flash"]),
    "gemini-2-flash": ("google", ["gemini-2.0-flash", "gemini-2.0-flash-001",
                                  "projects/p-1/locations/us-central1/publishers/google/models/gemini-2.0-flash-001"]),
    "gemini-3-pro": ("google", ["gemini-3-pro-preview", "google/gemini-3-pro-preview"]),
    "gemma-3-27b": ("google", ["google/gemma-3-27b-it", "google.gemma-3-27b-it", "gemma-3-27b-it"]),
    "grok-4": ("xai", ["grok-4", "grok-4-0709", "x-ai/grok-4", "xai/grok-4"]),
    "grok-4-1-fast": ("xai", ["grok-4-1-fast-reasoning", "grok-4-1-fast-non-reasoning", "xai/grok-4.1-fast-non-reasoning",
                              "grok-4.1-fast-reasoning", "x-ai/grok-4-1-fast"]),
    "grok-4-fast": ("xai", ["xai.grok-4-fast-reasoning", "grok-4-fast", "x-ai/grok-4-fast:free"]),
    "grok-1-code-fast": ("xai", ["grok-code-fast-1", "x-ai/grok-code-fast-1"]),
    "mistral-large": ("mistral", ["mistral-large-latest", "mistral-large-2411", "mistral.mistral-large-2407-v1:0",
                                  "mistralai/mistral-large-2411"]),
    "mistral-nemo": ("mistral", ["open-mistral-nemo", "mistralai/mistral-nemo"]),
    "codestral": ("mistral", ["codestral-latest", "codestral-2508", "mistralai/codestral-2508"]),
    "devstral-medium": ("mistral", ["devstral-medium-2507", "mistralai/devstral-medium-2507"]),
    "llama-4-scout-17b-16e": ("meta", ["meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout-17b-16e-instruct"]),
    "llama-4-scout-17b": ("meta", ["meta.llama4-scout-17b-instruct-v1:0", "us.meta.llama4-scout-17b-instruct-v1:0"]),
    "llama-3-3-70b": ("meta", ["meta-llama/Llama-3.3-70B-Instruct", "meta-llama/llama-3.3-70b-instruct",
                               "us.meta.llama3-3-70b-instruct-v1:0", "meta/llama-3.3-70b-instruct-maas",
                               "llama-3.3-70b-versatile", "meta-llama/Llama-3.3-70B-Instruct-Turbo"]),
    "llama-3-1-70b": ("meta", ["meta.llama3-1-70b-instruct-v1:0", "meta-llama/Meta-Llama-3.1-70B-Instruct"]),
    "deepseek-r1": ("deepseek", ["deepseek/deepseek-r1", "us.deepseek.r1-v1:0", "deepseek.r1-v1:0",
                                 "deepseek-ai/DeepSeek-R1", "DeepSeek-R1", "deepseek-r1-0528",
                                 "deepseek-ai/deepseek-r1-0528-maas"]),
    "deepseek-v3-1": ("deepseek", ["deepseek.v3-v1:0", "us.deepseek.v3-v1:0", "deepseek/deepseek-chat-v3.1",
                                   "deepseek-v3.1-maas", "deepseek/deepseek-v3.1-terminus:exacto", "deepseek-v3.1"]),
    "deepseek-v3-2": ("deepseek", ["deepseek-v3.2", "deepseek/deepseek-v3.2", "deepseek.v3.2", "deepseek-v3.2-exp"]),
    "deepseek": ("deepseek", ["deepseek-chat", "deepseek-reasoner", "deepseek/deepseek-chat"]),  # the current model
    "deepseek-r1-distill-llama-70b": ("deepseek", ["deepseek-r1-distill-llama-70b",
                                                   "deepseek-ai/DeepSeek-R1-Distill-Llama-70B"]),
    "qwen-3-coder": ("alibaba", ["qwen/qwen3-coder", "qwen3-coder", "alibaba/qwen3-coder"]),
    "qwen-3-coder-480b-a35b": ("alibaba", ["qwen.qwen3-coder-480b-a35b-v1:0", "Qwen/Qwen3-Coder-480B-A35B-Instruct",
                                           "qwen/qwen3-coder-480b-a35b-instruct-maas"]),
    "qwen-3-max": ("alibaba", ["qwen3-max", "qwen/qwen3-max", "qwen3-max-2026-01-23", "qwen3-max-preview"]),
    "qwen-2-5-coder-32b": ("alibaba", ["Qwen/Qwen2.5-Coder-32B-Instruct", "qwen2.5-coder-32b-instruct"]),
    "nova-pro": ("amazon", ["amazon.nova-pro-v1:0", "us.amazon.nova-pro-v1:0", "amazon/nova-pro"]),
    "nova-2-lite": ("amazon", ["amazon.nova-2-lite-v1:0", "global.amazon.nova-2-lite-v1:0", "amazon/nova-2-lite"]),
    "titan-express-text": ("amazon", ["amazon.titan-text-express-v1"]),
    "command-r-plus": ("cohere", ["cohere.command-r-plus-v1:0", "CohereLabs/c4ai-command-r-plus-08-2024",
                                  "command-r-plus-08-2024"]),
    "command-a": ("cohere", ["command-a-03-2025", "CohereLabs/c4ai-command-a-03-2025", "cohere/command-a"]),
    "kimi-k2": ("moonshot", ["kimi-k2-0905-preview", "moonshotai/kimi-k2-instruct", "kimi-k2-turbo-preview",
                             "kimi-k2-thinking", "moonshot.kimi-k2-thinking", "moonshotai/kimi-k2-0905"]),
    "kimi-k2-5": ("moonshot", ["kimi-k2.5", "moonshotai/kimi-k2.5"]),
    "moonshot-v1-128k": ("moonshot", ["moonshot-v1-128k"]),
    "glm-4-6": ("zhipu", ["zai/glm-4.6", "z-ai/glm-4.6", "zai-org/glm-4.6", "glm-4.6"]),
    "glm-4-5-air": ("zhipu", ["glm-4.5-air", "zai/glm-4.5-air"]),
    "phi-4": ("microsoft", ["microsoft/Phi-4", "phi-4"]),
    "phi-3-5-mini": ("microsoft", ["Phi-3.5-mini-instruct", "microsoft/Phi-3.5-mini-instruct"]),
    "mai-ds-r1": ("microsoft", ["MAI-DS-R1", "microsoft/MAI-DS-R1"]),
    "minimax-m2": ("minimax", ["MiniMax-M2", "minimax-m2-maas", "minimax/minimax-m2", "minimax.minimax-m2",
                               "minimaxai/minimax-m2-maas"]),
}

IDS = [(model, vendor, i) for model, (vendor, ids) in CORPUS.items() for i in ids]


@pytest.mark.parametrize("model,vendor,model_id", IDS)
def test_each_real_id_reads_as_its_model(model: str, vendor: str, model_id: str) -> None:
    found = NAMES.read(model_id)
    assert isinstance(found, ModelName), found
    assert found.canonical == model
    assert vendor in vendors_of(found.canonical, ROWS)


@pytest.mark.parametrize("model", list(CORPUS))
def test_every_name_of_a_model_is_that_model(model: str) -> None:
    read = [NAMES.read(i) for i in CORPUS[model][1]]
    assert all(isinstance(a, ModelName) and isinstance(b, ModelName) and a.same_model(b)
               for a, b in combinations(read, 2))


def test_the_issues_two_names_of_one_model_are_one_model() -> None:
    """Accepted under independent = "model" before: Bedrock's prefix was stripped with its vendor
    (`us.deepseek.r1-v1:0` read `r1`), and Cursor's word order was another model."""
    for a, b in (("deepseek/deepseek-r1", "us.deepseek.r1-v1:0"), ("claude-4.5-sonnet", "claude-sonnet-4-5-20250929")):
        one, two = NAMES.read(a), NAMES.read(b)
        assert isinstance(one, ModelName) and isinstance(two, ModelName) and one.same_model(two), (one, two)


def test_bedrocks_ids_are_read_for_every_vendor_it_serves() -> None:
    """Each provider prefix, under each regional prefix, reads as the vendor's own name."""
    for region in ("", "us.", "eu.", "apac.", "au.", "jp.", "global.", "us-gov."):
        for bedrock, native in (("anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1"),
                                ("deepseek.r1-v1:0", "deepseek-r1"), ("meta.llama3-3-70b-instruct-v1:0", "llama-3-3-70b"),
                                ("amazon.nova-pro-v1:0", "nova-pro"), ("mistral.mistral-large-2407-v1:0", "mistral-large"),
                                ("qwen.qwen3-coder-480b-a35b-v1:0", "qwen-3-coder-480b-a35b"),
                                ("openai.gpt-oss-120b-1:0", "gpt-oss-120b"), ("google.gemma-3-27b-it", "gemma-3-27b"),
                                ("cohere.command-r-plus-v1:0", "command-r-plus"), ("minimax.minimax-m2", "minimax-m2"),
                                ("moonshot.kimi-k2-thinking", "kimi-k2"), ("ai21.jamba-1-5-large-v1:0", "jamba-1-5-large"),
                                ("writer.palmyra-x5-v1:0", "palmyra-x5")):
            found = NAMES.read(region + bedrock)
            assert isinstance(found, ModelName) and found.canonical == native, (region + bedrock, found)


@pytest.mark.parametrize("a,b", [
    ("gpt-5", "gpt-5-mini"), ("claude-sonnet-4-5", "claude-opus-4-1"), ("o3", "o3-mini"),
    ("gemini-2.5-pro", "gemini-2.5-flash"), ("claude-sonnet-4-5", "claude-sonnet-4"), ("sonnet", "opus"),
    ("deepseek-r1", "deepseek-v3.1"), ("us.deepseek.r1-v1:0", "deepseek.v3-v1:0"), ("kimi-k2", "kimi-k2.5"),
    ("gpt-oss-120b", "gpt-oss-20b"), ("llama-3.3-70b", "llama-3.1-8b"), ("gpt-5.1-codex", "gpt-5.1-codex-max"),
    ("deepseek-r1-distill-llama-70b", "llama-3.3-70b"), ("qwen3-coder", "qwen3-max"), ("gpt-4o", "gpt-4"),
    ("claude-3-5-sonnet", "claude-3-7-sonnet"), ("mistral-large", "mistral-medium"),
])
def test_names_of_different_models_stay_apart(a: str, b: str) -> None:
    one, two = NAMES.read(a), NAMES.read(b)
    assert isinstance(one, ModelName) and isinstance(two, ModelName)
    assert not one.same_model(two), (one, two)


@pytest.mark.parametrize("a,b", [
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "us.meta.llama4-scout-17b-instruct-v1:0"),  # Bedrock omits 16e
    ("mistralai/Mistral-Small-3.1-24B-Instruct-2503", "mistral-small-2503"),  # the API's name omits version and size
    ("qwen/qwen3-coder", "qwen.qwen3-coder-480b-a35b-v1:0"),
])
def test_a_name_that_says_less_is_the_model_that_says_more(a: str, b: str) -> None:
    one, two = NAMES.read(a), NAMES.read(b)
    assert isinstance(one, ModelName) and isinstance(two, ModelName) and one.same_model(two), (one, two)


def test_a_name_without_a_version_is_every_version_of_its_line() -> None:
    """Claude Code's `sonnet` floats to the newest Sonnet: it is each of them, never another."""
    sonnet = NAMES.read("sonnet")
    assert isinstance(sonnet, ModelName)
    for other in ("claude-sonnet-4-5", "claude-sonnet-4-6", "claude-3-7-sonnet", "claude-sonnet-5"):
        found = NAMES.read(other)
        assert isinstance(found, ModelName) and found.same_model(sonnet)
    opus = NAMES.read("claude-opus-4-1")
    assert isinstance(opus, ModelName) and not opus.same_model(sonnet)


@pytest.mark.parametrize("model_id,part,said", [
    ("azure/gpt5-prod", "azure/", "a deployment, named by its owner"),
    ("my-gpt-5-deployment", "my", "a word no model family's names begin with"),
    ("claude-sonnet-4-5-turbo-x", "x", "a word no claude model's name has"),
    ("gpt-5-superduper", "superduper", "a word no gpt model's name has"),
    ("acme/claude-sonnet-4-5", "acme/", "a namespace no scheme names"),
    ("nvidia.llama-3.1-nemotron-70b", "nvidia.", "a dotted provider prefix no scheme names"),
    ("gpt-5:my-org", ":my-org", "a variant no scheme names"),
    ("claude-sonnet-4-5@v7", "@v7", "a version no scheme names"),
    ("arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2c3", "", "application inference profile"),
    ("claude-4", "claude-4", "a claude name without its model line"),
    ("opusplan", "opusplan", "a word no model family's names begin with"),  # two models, by mode
    ("auto", "auto", "a word no model family's names begin with"),  # whichever model the IDE picks
    ("gemini-exp-1206", "", "a gemini name without its model line"),
    ("", "", "empty"),
    ("gpt-5\n", "", ""),  # stripped like any id: placed
])
def test_an_id_no_scheme_places_is_unplaced_with_its_reason(model_id: str, part: str, said: str) -> None:
    found = NAMES.read(model_id)
    if not said:
        assert isinstance(found, ModelName)
        return
    assert isinstance(found, Unplaced) and said in found.reason and part in found.detail, found


def test_the_policys_aliases_place_a_deployment_or_a_model_of_its_own() -> None:
    names = ModelNames.from_plain(TABLE.plain, {"azure/Team-GPT": "gpt-5", "acme-coder-1": "acme-coder-1",
                                                "azure/acme": "ACME-coder-1"})
    deployment, own, other = names.read("AZURE/team-gpt"), names.read("acme-coder-1"), names.read("acme-coder-2")
    served = names.read("azure/acme")  # a deployment of the model of its own
    assert isinstance(served, ModelName) and isinstance(own, ModelName) and served.same_model(own)
    assert isinstance(deployment, ModelName) and deployment.canonical == "gpt-5"
    assert deployment.how[0] == "the policy's [review.models]"
    assert isinstance(own, ModelName) and own.family == "" and own.canonical == "acme-coder-1"
    assert isinstance(other, Unplaced)  # a model of its own is that id only
    gpt = NAMES.read("openai/gpt-5")
    assert isinstance(gpt, ModelName) and deployment.same_model(gpt) and not own.same_model(gpt)


def test_the_table_is_versioned_and_every_entry_sourced_and_dated() -> None:
    assert TABLE.version
    for entry in (*TABLE.schemes, *TABLE.families):
        assert entry.sources and all(s.startswith("https://") for s in entry.sources), entry.id
        assert entry.checked <= dt.date.today()


def test_every_familys_vendor_is_the_vendor_tables() -> None:
    vendors = {v.id for v in load_vendor_table().vendors}
    for family in TABLE.families:
        assert family.vendor in vendors
        assert family.vendor in vendors_of(family.id, ROWS), family.id


def test_the_shipped_table_is_documented_entry_by_entry() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "receipts.md").read_text()
    assert f"### The model-id table ({TABLE.version})" in doc
    for entry in (*TABLE.schemes, *TABLE.families):
        assert f"`{entry.id}`" in doc and all(s in doc for s in entry.sources), entry.id


@pytest.mark.parametrize("edit,said", [
    (('id = "claude"', 'id = "Claude"'), "family[0].id"),
    (('words = ["opus", "sonnet"', 'words = [1, "sonnet"'), "family[0].words[0]: must be a string"),
    (('checked = "2026-12-05"', 'checked = "yesterday"'), "scheme[0].checked"),
    (('needs = "word"', 'needs = "words"'), "family[0].needs: 'words' is not one of"),
    (('sonnet = "claude-sonnet"', 'sonnet = "claude-sonet"'),
     f"scheme[{[s.id for s in TABLE.schemes].index('claude-code')}].aliases.sonnet: 'claude-sonet' is placed by no "
     "scheme"),
])
def test_a_malformed_table_is_refused_with_the_line_and_location(edit: tuple[str, str], said: str) -> None:
    text = (Path(__file__).resolve().parents[2] / "gatecore" / "data" / "models.toml").read_text()
    assert edit[0] in text
    with pytest.raises(GateError) as err:
        parse_model_names(text.replace(edit[0], edit[1], 1).encode(), "models.toml")
    assert err.value.code == "GATE-CONFIG-POLICY" and said in err.value.detail, err.value.detail
    assert re.match(r"models\.toml:\d+: ", err.value.detail), err.value.detail
