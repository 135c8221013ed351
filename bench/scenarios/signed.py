"""The signed push: 10k commits, every one SSH-signed, into `[signatures] require`, beside `git
verify-commit` over the same commits."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from .. import hooks
from ..generate import allowed_signers_line
from .core import BenchCore, Case, PushSpec, _k


class Signed(BenchCore):
    def signed(self) -> list[Case]:
        """A first push of `signed_commits` commits, every one SSH-signed, into `[signatures] require`
        (the gate verifies each in-process), beside the native baseline: `git verify-commit` over
        the same commits (one `ssh-keygen` per commit), timed once."""
        from server.install import install

        n = self.sizes.signed_commits
        repo = self.cache.signed(self.cache.history(n, self.sizes.files))
        signers = self.work / "allowed_signers"
        signers.write_text(allowed_signers_line())
        policy = self.work / "policy-signed.toml"
        policy.write_text(hooks.POLICY + '\n[signatures]\nrequire = ["refs/heads/**"]\n')
        keyring = self.keys()[0]
        def install_gate(git_dir: Path) -> None:
            install(git_dir, policy, keyring, "git", hooks.REPOSITORY_ID, allowed_signers=signers)

        installers = {"none": hooks.installer("none", policy, keyring), "gate": install_gate}
        label = f"signed first push: {_k(n)} commits, every one SSH-signed, into signatures.require"
        case = self.push_case(PushSpec("signed", label, None, repo, ["refs/heads/*:refs/heads/*"], ("none", "gate"),
                                       short=f"signed {_k(n)}, first push",
                                       size=n), installers)
        commits = self.git.out("rev-list", "refs/heads/main", cwd=repo).split()
        env = {**self.git.env, "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "gpg.ssh.allowedSignersFile",
               "GIT_CONFIG_VALUE_0": str(signers)}
        t0 = time.perf_counter()
        bad = 0
        for c in commits:
            proc = subprocess.run(["git", "verify-commit", c], cwd=repo, env=env, capture_output=True, check=False)
            bad += proc.returncode != 0
        native = time.perf_counter() - t0
        gate = case.variants["gate"].alone_median
        case.note = (f"native baseline: git verify-commit over the same {len(commits)} commits took {native:.1f} s "
                     f"({native / len(commits) * 1000:.1f} ms each, {bad} failed); the gate's hook alone "
                     + ("-" if gate is None else f"{gate:.2f} s ({gate / native:.3f}x)"))
        self.log("    " + case.note)
        if bad:
            case.variants["gate"].errors.append(f"native verify-commit failed on {bad} commits")
        return [case]
