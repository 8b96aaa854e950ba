"""The DDP scripts' choice of backend and device, for every GPU count (a count given, not a GPU needed)."""

from __future__ import annotations

import pytest
import torch

from torchcourse.parallel.devices import choose, distributed_line


@pytest.mark.parametrize("local_rank", [0, 1, 3])
def test_auto_gives_each_process_its_own_gpu_when_there_are_enough(local_rank):
    place = choose("auto", local_rank, local_world_size=4, cuda_count=4)
    assert place.backend == "nccl"
    assert place.device == torch.device("cuda", local_rank)
    assert place.device_ids == [local_rank]


@pytest.mark.parametrize("cuda_count", [0, 1, 3])
def test_auto_falls_back_to_gloo_on_the_cpu_with_fewer_gpus_than_processes(cuda_count):
    place = choose("auto", 1, local_world_size=4, cuda_count=cuda_count)
    assert (place.backend, place.device, place.device_ids) == ("gloo", torch.device("cpu"), None)
    assert f"{cuda_count} GPU{'' if cuda_count == 1 else 's'} for 4 processes" in place.reason


def test_auto_without_nccl_in_the_build_uses_gloo_even_with_gpus():
    place = choose("auto", 0, local_world_size=2, cuda_count=8, nccl_available=False)
    assert place.backend == "gloo" and place.device.type == "cpu" and "no NCCL" in place.reason


def test_gloo_stays_on_the_cpu_even_with_gpus():
    place = choose("gloo", 1, local_world_size=2, cuda_count=2)
    assert (place.backend, place.device, place.device_ids) == ("gloo", torch.device("cpu"), None)


def test_nccl_with_one_gpu_per_process_uses_the_local_rank_not_the_global_rank():
    # the second process of the second node: RANK 5, LOCAL_RANK 1 -> cuda:1
    place = choose("nccl", 1, local_world_size=4, cuda_count=4)
    assert place.device == torch.device("cuda", 1) and place.device_ids == [1]


@pytest.mark.parametrize("cuda_count, nccl, words", [(1, True, "2 processes on this machine need one GPU each, "
                                                                  "and only 1 GPU is visible"),
                                                     (0, True, "and only 0 GPUs are visible"),
                                                     (2, False, "no NCCL")])
def test_nccl_refuses_clearly_when_it_cannot_give_every_process_a_gpu(cuda_count, nccl, words):
    with pytest.raises(ValueError, match="--backend nccl") as info:
        choose("nccl", 0, local_world_size=2, cuda_count=cuda_count, nccl_available=nccl)
    assert words in str(info.value) and "--backend gloo" in str(info.value)


def test_bad_requests_are_named():
    with pytest.raises(ValueError, match="'mpi'"):
        choose("mpi", 0, 1, 0)
    with pytest.raises(ValueError, match="LOCAL_RANK 2"):
        choose("auto", 2, 2, 2)


@pytest.mark.parametrize("available", [True, False])
def test_the_first_cells_distributed_line_is_in_the_learners_language_with_pythons_value(monkeypatch, available):
    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "en")
    assert distributed_line(available) == f"torch.distributed available: {available}"
    monkeypatch.setenv("TORCHCOURSE_LANGUAGE", "zh_CN")
    assert distributed_line(available) == f"torch.distributed 是否可用：{available}"
