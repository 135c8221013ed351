"""The one test harness: real repositories, real identities, real `git push` into bare
repositories with the gate installed, and one vocabulary for what the gate answered.

* `gitutil`: `git`, `gate`, `WorkRepo`, the identities;
* `server`: `Server`, a bare repository with the gate installed and a clone that pushes to it;
* `lab`: `Lab`, a server with keys, a ledger and the trusted side's tools (`gatecore.trusted`);
* `engine`: the in-process tier: `EngineServer` (a real bare repository whose pushes the engine
  decides in this process: `PushChecker`, `gatecore.reserved.check`), `EngineLab` (`Lab` over
  it), `FaultyReader` (the hook's `GitStream` reporting chosen objects missing or corrupt);
* `attacks`: the seal and validity attacks on receipts, as data, for both tiers;
* `keygen`: `ssh_key`, the one way the tests make SSH keys (`ssh-keygen`);
* `verdicts`: `codes_of`, `refused`, `declined`, `assert_refused` (codes from the gate's own
  `gate-json` lines, never from any text);
* `corpus`: the change kinds every frozen-file test runs (server, client, digest);
* `net`: free loopback ports and `git daemon` (as an account, on request);
* `webserver`: Apache with git-http-backend, hosting accounts (`runuser`), a gate they can run;
* `marks`: `LONG` / `more` for the variants that run with GATE_LONG_TESTS=1.
"""
