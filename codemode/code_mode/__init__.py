"""Code Mode: the ``run_code`` tool, the agent-facing ``CodeMode``, tool discovery and sessions.

Built on ``codemode.registry`` (every sub-call takes its pipeline), ``sandbox`` (where the
program runs) and ``sdk_gen`` (what the model reads, and the pre-flight check). The public
names are re-exported by ``codemode`` itself; this package exports nothing of its own.
"""
