"""core.distributed, DistributedDataParallel, DistributedSampler and the launcher, with real
processes: each test starts a job with `mindnlp run` (MPI underneath) and reads what the ranks print."""
import ast
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mindnlp.core.utils.data import DistributedSampler

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 120


def launch(nproc, script, *args):
    """Run a script (a path, or a worker of this folder) on nproc processes through the launcher."""
    command = [sys.executable, "-m", "mindnlp.launch", "--nproc-per-node", str(nproc),
               os.path.join(HERE, script), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)


def launch_failing(tmp_path, nproc, rank_one_does):
    """A job in which rank 1 runs `rank_one_does` before the others' all_reduce."""
    script = tmp_path / "job.py"
    script.write_text("import os, signal\nfrom mindnlp import core\nfrom mindnlp.core import distributed as dist\n"
                      f"dist.init_process_group()\nif dist.get_rank() == 1:\n    {rank_one_does}\n"
                      "t = core.ones(1)\ndist.all_reduce(t)\n")
    return launch(nproc, str(script))


@pytest.mark.parametrize("nproc", [2, 3])
def test_every_collective_matches_numpy(nproc, tmp_path):
    job = launch(nproc, "collectives_worker.py", str(tmp_path))
    assert job.returncode == 0, job.stderr
    passed = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(nproc)]
    for name in ("all_reduce avg core.bfloat16", "all_reduce non-contiguous", "reduce_scatter_tensor", "scatter",
                 "isend/irecv", "scatter_object_list", "group all_reduce" if nproc == 2 else "non-member rank"):
        assert name in passed[-1], name
    assert "gather" in passed[0] and "gather_object" in passed[0]  # the destination's own checks


@pytest.mark.parametrize("nproc,mode", [(2, "all"), (3, "all"), (2, "no_sync"), (3, "unused")])
def test_ddp_training_equals_one_process_on_the_full_batch(nproc, mode):
    job = launch(nproc, "ddp_worker.py", mode)
    assert job.returncode == 0, job.stderr
    result = json.loads(job.stdout.strip().splitlines()[-1])
    assert result["max_diff"] < 1e-5
    # with find_unused_parameters, a layer no rank used keeps no gradient
    assert result["unused_grad_is_none"] == (mode == "unused")


@pytest.mark.parametrize("nproc", [2, 3])
def test_zero_redundancy_optimizer_equals_plain_adamw(nproc):
    job = launch(nproc, "zero_worker.py")
    assert job.returncode == 0, job.stderr
    result = json.loads(job.stdout.strip().splitlines()[-1])
    assert result["weight_diff"] < 1e-5 and result["state_diff"] < 1e-6
    assert sum(result["owned"]) == result["total"] and max(result["owned"]) < result["total"]  # really sharded
    assert result["lr"] == result["ref_lr"]  # the schedule's learning rate is part of the state
    assert sum(count for _, count, _ in result["resumed"]) == 6  # every parameter's state, on its owner only
    assert all(diff == 0 and lr == result["lr"] for diff, _, lr in result["resumed"])


def test_ddp_names_parameters_that_got_no_gradient():
    job = launch(2, "ddp_worker.py", "unused_without_flag")
    assert job.returncode != 0
    assert "received no gradient" in job.stderr and "unused.weight" in job.stderr
    assert "find_unused_parameters=True" in job.stderr


def test_a_failing_rank_ends_the_job(tmp_path):
    job = launch_failing(tmp_path, 3, "raise ValueError('rank one breaks')")
    assert job.returncode != 0
    assert "rank one breaks" in job.stderr and "[rank 1] failed" in job.stderr


def test_a_killed_rank_ends_the_job(tmp_path):
    job = launch_failing(tmp_path, 2, "os.kill(os.getpid(), signal.SIGKILL)")
    assert job.returncode != 0  # within TIMEOUT: the others do not wait forever in all_reduce


def test_launcher_sets_torchrun_variables(tmp_path):
    script = tmp_path / "env.py"
    # each rank writes a file: MPI may interleave the ranks' stdout
    script.write_text("import os, sys\nv = [os.environ[k] for k in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE', "
                      "'LOCAL_WORLD_SIZE')]\nopen(os.path.join(sys.argv[1], 'rank' + v[0]), 'w').write(repr(v + "
                      "sys.argv[2:]))\n")
    job = subprocess.run([sys.executable, "-m", "mindnlp.launch", "--nproc-per-node", "2",
                          str(script), str(tmp_path), "--lr", "3"], capture_output=True, text=True, timeout=TIMEOUT)
    assert job.returncode == 0, job.stderr
    assert (tmp_path / "rank0").read_text() == "['0', '0', '2', '2', '--lr', '3']"
    assert (tmp_path / "rank1").read_text() == "['1', '1', '2', '2', '--lr', '3']"


def test_launcher_gives_each_process_its_share_of_the_cores(tmp_path, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    script = tmp_path / "cores.py"
    script.write_text("import os, sys\nopen(os.path.join(sys.argv[1], 'rank' + os.environ['RANK']), 'w').write("
                      "repr((sorted(os.sched_getaffinity(0)), os.environ['OMP_NUM_THREADS'])))\n")
    job = launch(2, str(script), str(tmp_path))
    assert job.returncode == 0, job.stderr
    cores = len(os.sched_getaffinity(0))
    share = max(1, cores // 2)
    (first, threads0), (second, threads1) = (ast.literal_eval((tmp_path / f"rank{r}").read_text()) for r in range(2))
    assert len(first) == len(second) == share and threads0 == threads1 == str(share)
    if cores >= 2:
        assert not set(first) & set(second)


def test_launcher_refuses_a_missing_script():
    job = subprocess.run([sys.executable, "-m", "mindnlp.launch", "--nproc-per-node", "2",
                          "/nonexistent/train.py"], capture_output=True, text=True, timeout=TIMEOUT)
    assert job.returncode != 0 and "does not exist" in job.stderr


@pytest.mark.parametrize("size,replicas,drop_last", [(10, 3, False), (10, 3, True), (9, 3, False), (2, 3, False)])
def test_distributed_sampler_partitions_like_torch(size, replicas, drop_last):
    samplers = [DistributedSampler(range(size), num_replicas=replicas, rank=r, shuffle=True, seed=4,
                                   drop_last=drop_last) for r in range(replicas)]
    parts = [list(s) for s in samplers]
    assert len({len(p) for p in parts}) == 1 and len(parts[0]) == len(samplers[0])
    covered = [i for p in parts for i in p]
    if drop_last:  # disjoint, the tail that does not divide evenly left out
        assert len(set(covered)) == len(covered) == size // replicas * replicas
    else:  # everything, padded by repeating indices up to a multiple of the replicas
        assert set(covered) == set(range(size)) and len(covered) == -(-size // replicas) * replicas
    first = list(samplers[0])
    samplers[0].set_epoch(1)
    assert list(samplers[0]) != first or size < 3  # a new epoch reshuffles
    samplers[0].set_epoch(0)
    assert list(samplers[0]) == first  # and the same epoch gives the same order


def test_distributed_sampler_without_shuffle_strides_by_rank():
    assert list(DistributedSampler(range(7), num_replicas=2, rank=1, shuffle=False)) == [1, 3, 5, 0]


def test_mindnlp_run_command(tmp_path, capfd):
    from mindnlp import cli

    script = tmp_path / "hello.py"
    script.write_text("from mindnlp import core\nfrom mindnlp.core import distributed as dist\n"
                      "dist.init_process_group()\nt = core.ones(1)\ndist.all_reduce(t)\n"
                      "assert t.item() == dist.get_world_size() == 2\n")
    assert cli.main(["run", "--nproc-per-node", "2", str(script)]) == 0
    assert cli.main(["run", "--nproc-per-node", "0", str(script)]) != 0
    assert "--nproc-per-node must be at least 1" in capfd.readouterr().err


def _trainer_run(nproc, output, per_device, *resume):
    worker = os.path.join(HERE, "trainer_worker.py")
    if nproc == 1:
        job = subprocess.run([sys.executable, worker, str(output), str(per_device), "4", *resume],
                             capture_output=True, text=True, timeout=TIMEOUT)
    else:
        job = launch(nproc, "trainer_worker.py", str(output), str(per_device), "4", *resume)
    assert job.returncode == 0, job.stderr[-3000:]
    weights = np.load(output / "result.npz")
    return {k: weights[k] for k in weights.files}, json.loads((output / "result.json").read_text())


def test_trainer_on_two_processes_equals_one_with_the_doubled_batch(tmp_path):
    single, single_log = _trainer_run(1, tmp_path / "one", 8)
    double, double_log = _trainer_run(2, tmp_path / "two", 4)
    assert double_log["world_size"] == 2 and single_log["world_size"] == 1
    assert max(float(np.abs(single[k] - double[k]).max()) for k in single) < 1e-5
    # logged training losses are averaged over the processes; evaluation is sharded and gathered
    for ours, theirs in zip(double_log["log_history"], single_log["log_history"]):
        for key in ("loss", "eval_loss", "grad_norm", "train_loss"):
            if key in theirs:
                assert abs(ours[key] - theirs[key]) < 1e-5, (key, ours, theirs)
    # one process wrote the checkpoint; each wrote its own RNG state
    assert "rng_state_0.pth" in double_log["files"] and "rng_state_1.pth" in double_log["files"]
    assert "model.safetensors" in double_log["files"] and "optimizer.pt" in double_log["files"]

    # resuming the two-process job from its step-2 checkpoint ends where the uninterrupted run did
    resumed, _ = _trainer_run(2, tmp_path / "resumed", 4, "--resume", str(tmp_path / "two" / "checkpoint-2"))
    assert max(float(np.abs(resumed[k] - double[k]).max()) for k in double) == 0
