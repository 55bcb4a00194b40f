"""Hostile files handed to the loaders (issue 34): ``learned:`` policy files and ``ppo:`` model files that are not
regular files, or whose zip directory or ``.npy`` headers declare far more than they hold, are refused with one
clear error before anything large is read or allocated (tracemalloc bounds what the refusal allocated)."""

from __future__ import annotations

import json
import os
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from agents import learned, make_agent
from agents.files import FileRefusedError, open_regular
from agents.learned import NumpyPolicy, PolicyFileError, shipped_manifest
from agents.ppo import ModelFileError, is_sb3_native, read_meta
from saboteur_env import GameConfig

CFG = GameConfig(num_players=5)


def _shipped() -> dict[str, np.ndarray]:
    with np.load(learned.POLICY_DIR / shipped_manifest()["base-5p"]["file"], allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _npy_header(shape: tuple[int, ...], dtype: str = "<f4") -> bytes:
    """A version 1.0 ``.npy`` header declaring ``shape`` (what np.save writes before the data)."""
    text = repr({"descr": dtype, "fortran_order": False, "shape": shape})
    text += " " * (63 - (10 + len(text)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode()


def _crafted(path: Path, member: str, write: Callable[[zipfile.ZipFile], None]) -> Path:
    """The shipped 5-player policy with ``member`` (e.g. ``w1.npy``) written by ``write`` instead."""
    arrays = _shipped()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for k, a in arrays.items():
            if f"{k}.npy" != member:
                with z.open(f"{k}.npy", "w") as fh:
                    np.lib.format.write_array(fh, a)
        write(z)
    return path


def _peak(call: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        call()
    except (PolicyFileError, ModelFileError):
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_a_member_whose_directory_declares_gigabytes_is_refused_before_decompressing(tmp_path: Path) -> None:
    def bomb(z: zipfile.ZipFile) -> None:
        # 96 MiB of zeros behind a header declaring 24M floats: ~100 KiB on disk, the shape of the 2 MB file
        # that forced a 2.2 GB allocation.
        with z.open("w1.npy", "w", force_zip64=True) as fh:
            fh.write(_npy_header((24 << 20,)))
            for _ in range(96):
                fh.write(bytes(1 << 20))

    path = _crafted(tmp_path / "bomb.npz", "w1.npy", bomb)
    assert path.stat().st_size < 2 << 20
    with pytest.raises(PolicyFileError, match=r"bomb\.npz: entry 'w1' declares 100663\d+ bytes uncompressed"):
        NumpyPolicy(path)
    assert _peak(lambda: NumpyPolicy(path)) < 8 << 20  # the old loader decompressed all 96 MiB first


def test_an_npy_header_declaring_more_than_its_member_holds_is_refused_before_allocating(tmp_path: Path) -> None:
    def liar(z: zipfile.ZipFile) -> None:
        z.writestr("w1.npy", _npy_header((1 << 29,)) + bytes(64))  # 2 GiB declared, 64 bytes held

    path = _crafted(tmp_path / "liar.npz", "w1.npy", liar)
    with pytest.raises(PolicyFileError, match=r"entry 'w1'.*header declares \(536870912,\) float32 .*holds 64 bytes"):
        NumpyPolicy(path)
    assert _peak(lambda: NumpyPolicy(path)) < 8 << 20


def test_a_meta_member_over_its_cap_and_unknown_members_are_refused(tmp_path: Path) -> None:
    arrays = _shipped()
    meta = json.loads(str(arrays["meta"]))
    np.savez(tmp_path / "big_meta.npz", **(arrays | {"meta": np.array(json.dumps({**meta, "pad": "x" * (2 << 20)}))}))
    with pytest.raises(PolicyFileError, match=r"entry 'meta' declares \d+ bytes uncompressed; at most 1048576"):
        NumpyPolicy(tmp_path / "big_meta.npz")
    np.savez(tmp_path / "extra.npz", **arrays, extra=np.zeros(3, dtype=np.float32))
    with pytest.raises(PolicyFileError, match=r"unexpected \['extra\.npy'\]"):
        NumpyPolicy(tmp_path / "extra.npz")
    deep = "[" * 100_000 + "]" * 100_000
    np.savez(tmp_path / "deep.npz", **(arrays | {"meta": np.array(deep)}))
    with pytest.raises(PolicyFileError, match=r"no readable 'meta' entry \(RecursionError\)"):
        NumpyPolicy(tmp_path / "deep.npz")
    huge = meta | {"hidden": 4096, "obs_size": 1 << 20}  # each field in range, together 4G weights
    np.savez(tmp_path / "huge.npz", **(arrays | {"meta": np.array(json.dumps(huge))}))
    with pytest.raises(PolicyFileError, match=r"declares \d+ weights; at most 33554432"):
        NumpyPolicy(tmp_path / "huge.npz")


def _specials(tmp_path: Path) -> list[tuple[Path, str]]:
    fifo = tmp_path / "fifo.npz"
    os.mkfifo(fifo)  # no writer: a plain open() for reading blocks forever
    folder = tmp_path / "folder.npz"
    folder.mkdir()
    return [(fifo, "a FIFO"), (Path("/dev/zero"), "a character device"), (folder, "a directory"),
            (tmp_path / "missing.npz", "does not exist")]  # fmt: skip


def test_learned_and_ppo_specs_read_regular_files_only(tmp_path: Path) -> None:
    for path, what in _specials(tmp_path):
        with pytest.raises(PolicyFileError, match=f"policy file {path} (is )?{what}"):
            make_agent(f"learned:{path}", CFG)
        with pytest.raises(ModelFileError, match=f"model file {path}: (is )?{what}"):
            read_meta(path)
        assert not is_sb3_native(path)


def test_open_regular_refuses_a_file_over_its_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(bytes(100))
    with open_regular(path, 100) as fh:
        assert fh.read() == bytes(100)
    with pytest.raises(FileRefusedError, match="is 100 bytes; at most 99 are read"):
        open_regular(path, 99)


def test_every_shipped_policy_still_loads() -> None:
    for record in shipped_manifest().values():
        policy = NumpyPolicy(learned.POLICY_DIR / record["file"])
        assert policy.w["w0"].dtype == np.float32 and policy.w["w0"].shape[0] == policy.obs_size


def test_imitation_data_and_shipping_read_regular_files_only(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from experiments.train.imitate_data import DataFileError, load_data
    from experiments.train.ship import to_half

    for path, what in _specials(tmp_path):
        with pytest.raises(DataFileError, match=f"{path} (is )?{what}"):
            load_data(path, CFG)
        with pytest.raises(PolicyFileError, match=f"{path} (is )?{what}"):
            to_half(path, tmp_path / "half.npz")
