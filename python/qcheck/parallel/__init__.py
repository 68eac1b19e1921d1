"""Runs of several processes and what they share: the workers of a run
(workers, their folder worker_link, the kernel's name for them targets),
their restart rules (supervise), MPS daemons (mps), the GPU memory ledger
(gpu_ledger) and the memory rules every fuzz loop follows (memory), and the
same on a Ray cluster (ray_workers, ray_door_worker; the C++ campaign's
ray_campaign and ray_campaign_exchange; ray_nodes, shared). supervise.py,
mps.py and ray_campaign.py also run as scripts, without the package."""
