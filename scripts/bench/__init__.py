"""The benchmark's helpers, shared with make demo and the integration tests:
`from scripts.bench import devices, perftest` with the project root on
PYTHONPATH (scripts/vm.d/guest-init sets it for every guest command)."""
