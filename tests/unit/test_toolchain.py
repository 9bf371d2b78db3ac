from __future__ import annotations

import pytest

from cutediff_tui.core import toolchain as t
from cutediff_tui.core.errors import ToolchainError


def test_parse_side_with_shared_pins_side_pin_wins():
    s = t.parse_side("4.8.0,quack-kernels==0.6.5", ["flash-attn-4==4.0.0b16", "quack-kernels==0.4.1"], cuda=13)
    assert s.dsl == "4.8.0"
    assert [str(p) for p in s.pins] == ["flash-attn-4==4.0.0b16", "quack-kernels==0.6.5"]
    assert s.label == "4.8.0 [flash-attn-4==4.0.0b16,quack-kernels==0.6.5]"


@pytest.mark.parametrize("bad", ["", "latest", "4.8.0,quack", "4.8.0,nvidia-cutlass-dsl==4.5.1"])
def test_parse_side_refuses_bad_input_with_a_sentence(bad):
    with pytest.raises(ToolchainError) as e:
        t.parse_side(bad)
    assert str(e.value).endswith(".")


def test_local_pin_is_recognised(tmp_path):
    (tmp_path / "flash_attn" / "cute").mkdir(parents=True)
    (tmp_path / "flash_attn" / "__init__.py").write_text("")
    pin = t.parse_pin(str(tmp_path))
    assert pin.is_local and pin.name == "flash-attn-4" and pin.path == str(tmp_path)
    s = t.parse_side("4.8.0", [str(tmp_path)], cuda=13)
    assert s.local_paths() == [str(tmp_path)]
    files = t.requirement_files(s, tmp_path)
    assert "flash-attn-4" in files["exc"].read_text().split()


def test_local_pin_without_package_is_refused(tmp_path):
    with pytest.raises(ToolchainError, match="holds none of"):
        t.parse_pin(str(tmp_path))


def test_env_key_depends_on_spec_and_python():
    a = t.parse_side("4.8.0", cuda=13)
    b = t.parse_side("4.8.0", cuda=12)
    assert t.env_key(a) != t.env_key(b)
    assert t.env_key(a, python="3.12") != t.env_key(a, python="3.11")
    assert t.env_key(a) == t.env_key(t.parse_side("4.8.0", cuda=13))


def test_requirement_files_override_pins_and_exclude_torch(tmp_path):
    s = t.parse_side("4.5.1", ["flash-attn-4==4.0.0b16"], cuda=13)
    f = t.requirement_files(s, tmp_path)
    assert "nvidia-cutlass-dsl[cu13]==4.5.1" in f["ovr"].read_text()
    assert "flash-attn-4==4.0.0b16" in f["ovr"].read_text()
    assert "torch" in f["exc"].read_text().split()


def test_parse_lock():
    text = (
        "einops==0.8.2 \\\n    --hash=sha256:aaa \\\n    --hash=sha256:bbb\n"
        "nvidia-cutlass-dsl[cu13]==4.8.0 \\\n    --hash=sha256:ccc\n    # via -r requirements.in\n"
    )
    lock = t.parse_lock(text)
    assert lock == {
        "einops": {"version": "0.8.2", "hashes": ["sha256:aaa", "sha256:bbb"]},
        "nvidia-cutlass-dsl": {"version": "4.8.0", "hashes": ["sha256:ccc"]},
    }


def test_nearby_versions():
    vs = ["4.4.0", "4.4.2", "4.5.0", "4.5.1", "4.5.2", "4.5.3", "4.6.0", "4.7.0", "4.8.0"]
    assert t.nearby_versions("4.5.9", vs) == ["4.5.0", "4.5.1", "4.5.2", "4.5.3"]
    assert "4.8.0" in t.nearby_versions("4.9.1", vs)


def test_host_cuda_override(monkeypatch):
    monkeypatch.setenv("CUTEDIFF_CUDA", "12")
    assert t.host_cuda_major() == 12


def test_clean_stale_removes_dead_half_created_env(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path))
    stale = tmp_path / "envs" / ".tmp-abc-999999999"
    stale.mkdir(parents=True)
    (stale / "junk").write_text("x")
    assert t.clean_stale() == 1
    assert not stale.exists()


def test_split_lock_moves_flavoured_libs_last():
    text = (
        "einops==0.8.2 \\\n    --hash=sha256:a\n"
        "nvidia-cutlass-dsl-libs-base==4.5.1 \\\n    --hash=sha256:b\n"
        "nvidia-cutlass-dsl-libs-cu13==4.5.1 \\\n    --hash=sha256:c\n    # via nvidia-cutlass-dsl\n"
        "numpy==2.4.6 \\\n    --hash=sha256:d\n"
    )
    main, flavour = t.split_lock(text, "nvidia-cutlass-dsl-libs-cu")
    assert set(t.parse_lock(main)) == {"einops", "nvidia-cutlass-dsl-libs-base", "numpy"}
    assert set(t.parse_lock(flavour)) == {"nvidia-cutlass-dsl-libs-cu13"}
    assert "sha256:c" in flavour and "sha256:c" not in main


def test_clean_stale_builds_removes_ended_nocache_builds(tmp_path):
    """`--no-cache` builds of processes that have ended are removed; a live process's are kept."""
    import os
    import subprocess

    from cutediff_tui.core.build import clean_stale_builds

    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / f".nocache-abc-{dead.pid}").mkdir()
    (tmp_path / f".nocache-def-{os.getpid()}").mkdir()
    (tmp_path / "0123456789ab").mkdir()  # a cached build
    assert clean_stale_builds(tmp_path) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["." + f"nocache-def-{os.getpid()}", "0123456789ab"]
