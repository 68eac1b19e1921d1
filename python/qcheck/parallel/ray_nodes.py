"""What both drivers on a Ray cluster share (the C++ campaign's,
ray_campaign.py, and the Python door's workers, qcheck.parallel.ray_workers):
connect (ray.init and the cluster's nodes), _share (Ray's resource
precision), a NodeAgent per node (the shipped files in a node-local folder,
the node's MPS daemons), and what a worker actor does for the process it
runs (_die_with_parent) and for the driver (_new_log_bytes).

Ray ships the actors' code by value (each driver registers these modules
with ray.cloudpickle): a node needs no copy of its own. No import of the
package here: ray_campaign.py, run as a script, imports this file beside it.
"""

import os
import signal
from pathlib import Path

LOG_CHUNK = 1 << 18  # log bytes a worker hands over per exchange and file


def _share(total, count):
    """total / count rounded down to Ray's resource precision (the shares never add up past the node's)."""
    return int(total / count * 10000) / 10000 if count else 0



def _die_with_parent():
    """In the child: SIGTERM when the actor's process dies (a killed actor leaves no fuzzer behind),
    and the priority of a process of one's own (_normal_priority)."""
    import ctypes
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    _normal_priority()


def _normal_priority():
    """Ray runs its workers at nice 15 (RAY_worker_niceness), and a fuzzer
    would inherit it: below the campaign's numerics and case_decode workers'
    nice 19 by little, and below everything else on the node. Back to 0
    where allowed (root, or CAP_SYS_NICE); the niceness left is returned.
    The actors that exchange a fuzzer's corpus call it too: left at 15
    beside fuzzers at 0 on every CPU, they starve."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    except OSError:
        pass
    return os.getpriority(os.PRIO_PROCESS, 0)


def _node_gpus(count):
    """The ids of a node's `count` GPUs as its raylet sees them (its
    CUDA_VISIBLE_DEVICES, which an actor holding no GPU inherits), the ids
    Ray's get_gpu_ids gives the workers; 0 .. count - 1 where it is unset."""
    visible = [g for g in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if g.strip()]
    return visible if len(visible) == count else [str(g) for g in range(count)]


def _new_log_bytes(folder, index, offsets):
    """{name: bytes} of worker `index`'s round logs in `folder` written since
    the last call (`offsets`, kept by the caller), at most LOG_CHUNK per file."""
    logs = {}
    for path in folder.glob(f"w{index}.r*.log"):
        at = offsets.get(path.name, 0)
        with open(path, "rb") as f:
            f.seek(at)
            chunk = f.read(LOG_CHUNK)
        if chunk:
            offsets[path.name] = at + len(chunk)
            logs[path.name] = chunk
    return logs


class NodeAgent:
    """One per node: the shipped files in a node-local folder, the node's MPS daemons (mps.py's rules)."""

    def __init__(self, campaign, files, gpus, mps_mode):
        import importlib.util
        import tempfile
        import ray
        # (per node: the simulated nodes of a test cluster share one machine)
        self.folder = Path(tempfile.gettempdir()) / "qcheck-ray" / campaign / ray.get_runtime_context().get_node_id()[:12]
        self.bin = self.folder / "bin"
        for name, data in files.items():
            path = self.folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o755)
        spec = importlib.util.spec_from_file_location("qcheck_mps", self.bin / "mps.py")
        mps = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mps)
        self.daemons = mps.Daemons(self.folder / "mps", _node_gpus(int(gpus)), mps_mode)
        nice = _normal_priority()
        if nice:
            self.daemons.note += (f"; the workers run at nice {nice}, Ray's worker niceness (start the node with "
                                  "RAY_worker_niceness=0)")

    def where(self):
        """(node folder, GPUs with an MPS daemon of ours, note, host)."""
        import socket
        return str(self.folder), self.daemons.own, self.daemons.note, socket.gethostname()

    def stop(self):
        """The daemons stopped, the node's folder removed (the driver holds everything)."""
        import shutil
        self.daemons.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
        try:
            self.folder.parent.rmdir()  # the campaign's, once its last node is done
        except OSError:
            pass


def connect(address):
    """ray.init on `address` ("local": a Ray instance of this process's own,
    its workers at nice 0, as _normal_priority would set them): the alive
    nodes as [(node_id, host, cpus, gpus)], this process's node first.
    ConnectionError with one line where the cluster cannot be used."""
    import ray
    try:
        if address == "local":
            os.environ.setdefault("RAY_worker_niceness", "0")
            ray.init(include_dashboard=False, logging_level="WARNING", log_to_driver=False)
        else:
            ray.init(address=address, logging_level="WARNING", log_to_driver=False)
    except Exception as e:  # Ray raises ConnectionError, RuntimeError, ValueError...
        raise ConnectionError(f"cannot use the Ray cluster at {address}: {e}") from None
    here = ray.get_runtime_context().get_node_id()
    nodes = [(n["NodeID"], n.get("NodeManagerHostname") or n["NodeManagerAddress"], n["Resources"].get("CPU", 0),
              n["Resources"].get("GPU", 0)) for n in ray.nodes() if n["Alive"]]
    return sorted(nodes, key=lambda n: (n[0] != here, n[1], n[0]))
