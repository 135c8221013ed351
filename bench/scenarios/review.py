"""The review push: `refs/heads/review/runner/<attempt>` with its sealed receipt (2,000 files, 50 MB),
the ledger's records already on the server, against native git's digest of the same change."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from .. import hooks
from ..gitenv import link_copy
from .core import BenchCore, Case, PushSpec, _k


class Reviews(BenchCore):
    def specs(self, scenario: str) -> list[PushSpec]:
        if scenario == "review":
            return [self._review_spec(self.cache.history(self.sizes.small_commits, self.sizes.files))]
        return super().specs(scenario)

    def review(self) -> list[Case]:
        return self.run_specs("review")

    def _review_spec(self, hist: Path) -> PushSpec:
        """A review/runner/<attempt> push with its sealed receipt, the ledger already on the server."""
        import time

        from gatecore.adapters.config import load_keyfile
        from gatecore.adapters.gitrepo import GitRepo
        from gatecore.git.refs import RECEIPTS_PREFIX, REVIEW_PREFIX
        from gatecore.records.ledger import RECEIPT_FILE
        from gatecore.trusted.attempts import append_record, record_commit
        from gatecore.trusted.bootstrap import bootstrap
        from gatecore.trusted.runner import record_review

        s = self.sizes
        server_base = self.cache.with_refs(hist, s.few_refs)
        cached_client = self.cache.review_client(hist, s.review_files, s.review_bytes)
        _keyring, attempt_keyfile, receipt_keyfile = self.keys()
        root = self.work / "review"
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        client = root / "client.git"
        link_copy(cached_client, client)
        server = root / "server.git"
        link_copy(server_base, server)
        base = self.git.out("rev-parse", "refs/heads/main", cwd=client)
        head = self.git.out("rev-parse", "refs/heads/review-head", cwd=client)

        ws = root / "workspace"
        ws.mkdir()
        now = int(time.time())
        boot = bootstrap(ws, now)
        prompt = b"Review this change. Reply with JSON: verdict, reasons.\n"
        akey = load_keyfile(attempt_keyfile)
        rkey = load_keyfile(receipt_keyfile)
        runner_env = {"REMOTE_USER": "gate-runner"}
        _, pushed = append_record(client, boot.attempt_id, akey, "opened", str(server), now,
                                  repository=hooks.REPOSITORY_ID, workspace="ws-1",
                                  workspace_generation=boot.workspace_generation,
                                  prompt_sha256=hashlib.sha256(prompt).hexdigest(), env=runner_env)
        assert pushed is not None and pushed.ok, pushed
        _, pushed = append_record(client, boot.attempt_id, akey, "model-selected", str(server), now,
                                  model_id="model-b", env=runner_env)
        assert pushed is not None and pushed.ok, pushed
        verdict = json.dumps({"verdict": "pass", "reasons": ["benchmark change, reviewed"]}).encode()
        receipt = record_review(client, boot.attempt_id, base, head, verdict, rkey,
                                boot.scoring_dir / "receipt.json", None, None, 3600, now)
        repo = GitRepo.at(client)
        receipts_ref = RECEIPTS_PREFIX + boot.attempt_id
        commit = record_commit(repo, RECEIPT_FILE, receipt.read_bytes(), None, f"gate receipt {boot.attempt_id}\n",
                               now)
        repo.set_ref(receipts_ref, commit, None)
        refspecs = [f"+{head}:{REVIEW_PREFIX}{boot.attempt_id}", f"{receipts_ref}:{receipts_ref}"]
        mb = s.review_bytes / (1 << 20)
        label = f"review push: {_k(s.review_files)} files / {mb:.0f} MB with its receipt"
        return PushSpec("review", label, server, client, refspecs,
                        ("none", "floor", "peer", "native-digest", "gate"), base=base, atomic=True,
                        env={"REMOTE_USER": "gate-runner"}, size=s.review_files,
                        short=f"review push ({_k(s.review_files)} files, {mb:.0f} MB)",
                        note="pusher gate-runner (trusted); ledger records already on the server")
