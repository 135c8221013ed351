#!/usr/bin/env bash
# The worked example of docs/ci.md: bootstrap, ledger, runner and gate wired together,
# against a local bare repository with the gate installed. Usage: ci-example.sh WORKDIR
# Needs `gate` and `git` on PATH. Every step is a command a CI job would run.
set -euo pipefail
W=${1:?usage: ci-example.sh WORKDIR}
mkdir -p "$W" && cd "$W"
export GIT_AUTHOR_NAME=ci GIT_AUTHOR_EMAIL=ci@example.com GIT_COMMITTER_NAME=ci GIT_COMMITTER_EMAIL=ci@example.com

# --- once, on the server (the admin) ---------------------------------------------------
git init -q --bare -b main server.git
gate keys generate --alg ed25519 --id orchestrator-1 --purpose attempt --out orchestrator.key >  keyring.toml
gate keys generate --alg ed25519 --id runner-1       --purpose receipt --out runner.key       >> keyring.toml
cat > policy.toml <<'POLICY'
[[freeze]]
paths = ["ci/**", ".gate/**", ".pre-commit-config.yaml"]
authors = ["*@agents.example.com"]
pushers = ["agent-*"]
[trusted]
pushers = ["ci-runner"]
[review]
independent = "model"    # a model never reviews the change it wrote ("vendor": nor its vendor's models)
[review.models]          # ids no naming scheme places: this example's placeholder models, each its own
model-a = "model-a"
model-b = "model-b"
model-c = "model-c"
POLICY
gate server install server.git --policy policy.toml --keyring keyring.toml --repository-id demo/repo

# --- a project with a change by an agent -----------------------------------------------
git clone -q server.git runner-clone 2>/dev/null
cd runner-clone
echo "print(1)" > app.py && git add app.py && git commit -qm base && REMOTE_USER=human git push -q origin main
git checkout -q -b feature
echo "print(2)" > app.py && git commit -qam "agent change" \
  --author "Agent 7 <agent-7@agents.example.com>"
cd ..

# --- the CI job: the trusted side runs before and around the agent ---------------------
export REMOTE_USER=ci-runner          # how the server knows the runner (ssh account, http user)
mkdir -p workspace
eval "$(gate bootstrap --workspace workspace)"        # WORKSPACE_GEN, ATTEMPT_ID, GATE_SCORING_DIR
echo "Review this change; answer with JSON {verdict, reasons}." > prompt.txt
gate attempt open --repo runner-clone --attempt "$ATTEMPT_ID" --workspace ws-1 \
  --workspace-gen "$WORKSPACE_GEN" --prompt-file prompt.txt --repository-id demo/repo \
  --author-model model-c --initiator human \
  --key orchestrator.key --push origin                # model-c is the agent's: it wrote the change
eval "$(gate attempt select-model --repo runner-clone --attempt "$ATTEMPT_ID" --model model-a \
  --key orchestrator.key --push origin)"               # MODEL_ID=model-a, now on record

# model A scores; the runner takes only verdict and reasons from its output
echo '{"verdict": "pass", "reasons": ["small change, tests pass"]}' > "$GATE_SCORING_DIR/model-a.json"
gate review record --repo runner-clone --attempt "$ATTEMPT_ID" --head feature \
  --model-output "$GATE_SCORING_DIR/model-a.json" --key runner.key \
  --out "$GATE_SCORING_DIR/receipt.json" --remote origin

# model A goes offline before the push; the orchestrator fails over to model B
eval "$(gate attempt failover --repo runner-clone --attempt "$ATTEMPT_ID" --model model-b \
  --reason "model-a offline" --key orchestrator.key --push origin)"

# the incident: a retry finds receipt.json on disk and pushes it without scoring
if gate review push --repo runner-clone --attempt "$ATTEMPT_ID" \
     --receipt "$GATE_SCORING_DIR/receipt.json" --remote origin 2> stale.txt; then
  echo "stale receipt ACCEPTED: the gate is broken" >&2; exit 1
fi
grep 'GATE-BIND-MODEL' stale.txt
echo "stale receipt rejected"

# model B scores the change itself; its receipt is bound to this attempt and model
echo '{"verdict": "pass", "reasons": ["reviewed by model-b"]}' > "$GATE_SCORING_DIR/model-b.json"
gate review record --repo runner-clone --attempt "$ATTEMPT_ID" --head feature \
  --model-output "$GATE_SCORING_DIR/model-b.json" --key runner.key \
  --out "$GATE_SCORING_DIR/receipt-model-b.json" --remote origin --push
echo "fresh receipt accepted: refs/heads/review/runner/$ATTEMPT_ID"
gate attempt show --repo runner-clone --attempt "$ATTEMPT_ID" --policy policy.toml | sed -n 1,3p   # author, reviewer, initiator, ids read as the server's policy reads them (sed reads to the end: no SIGPIPE under pipefail)
gate attempt close --repo runner-clone --attempt "$ATTEMPT_ID" --key orchestrator.key --push origin
tail -n 1 server.git/gate/audit.log
