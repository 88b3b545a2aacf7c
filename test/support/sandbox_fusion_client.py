"""Drives a SandboxFusion-compatible service with SandboxFusion's own Python client (PyPI sandbox-fusion).

Usage: python sandbox_fusion_client.py URL -> one JSON object on stdout: what the client parsed.
"""
import json
import sys

from sandbox_fusion import RunCodeRequest, run_code, summary_run_code_result
from sandbox_fusion.models import SummaryMapping

url = sys.argv[1]
mapping = SummaryMapping(Success='ok', Failed='failed', RunTimeout='timeout')
out = {}
for name, code, timeout in [
    ('hello', 'print(6 * 7)', 5),
    ('exception', 'raise ValueError("boom")', 5),
    ('timeout', 'while True:\n    pass', 1),
]:
    # The client validates the answer with its own pydantic models (RunCodeResponse) and raises on SandboxError.
    r = run_code(RunCodeRequest(code=code, language='python', run_timeout=timeout), endpoint=url, max_attempts=1)
    out[name] = {
        'status': r.status.value,
        'run_status': r.run_result.status.value,
        'return_code': r.run_result.return_code,
        'stdout': r.run_result.stdout,
        'stderr_tail': (r.run_result.stderr or '')[-200:],
        'summary': summary_run_code_result(r, mapping),
    }
try:
    run_code(RunCodeRequest(code='x', language='cpp'), endpoint=url, max_attempts=1)
    out['cpp'] = 'no error'
except Exception as e:  # noqa: BLE001 - the client raises a bare Exception for SandboxError
    out['cpp'] = str(e)
print(json.dumps(out))
