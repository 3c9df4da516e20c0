"""The package itself: import, version, exceptions, options, and the built module."""

import struct

import pytest

import lockstep


def test_import_and_version():
    assert lockstep.__version__ == "0.1.0"
    for name in lockstep.__all__:
        assert hasattr(lockstep, name)


def test_public_functions_have_docstrings():
    for name in ("emulator_options", "set_emulator_options", "emulator_options_scope", "rgb_to_grayscale", "matmul"):
        assert getattr(lockstep, name).__doc__, name


def test_exception_hierarchy():
    assert issubclass(lockstep.CudaError, RuntimeError)
    assert issubclass(lockstep.LaunchError, lockstep.CudaError)
    assert issubclass(lockstep.KernelError, lockstep.CudaError)
    assert not issubclass(lockstep.LaunchError, lockstep.KernelError)


def test_options_round_trip():
    lockstep.set_emulator_options(workers=1, order="reverse", seed=42, stack_kib=128)
    assert lockstep.emulator_options() == {"workers": 1, "order": "reverse", "seed": 42, "stack_kib": 128}
    lockstep.set_emulator_options(order="random")  # only what is given changes
    assert lockstep.emulator_options() == {"workers": 1, "order": "random", "seed": 42, "stack_kib": 128}


def test_options_scope_restores_even_after_an_error():
    before = lockstep.emulator_options()
    with pytest.raises(KeyError):
        with lockstep.emulator_options_scope(workers=2, order="random", seed=7) as inside:
            assert inside == lockstep.emulator_options()
            assert (inside["workers"], inside["order"], inside["seed"]) == (2, "random", 7)
            raise KeyError("leave the block")
    assert lockstep.emulator_options() == before


def test_bad_order_names_the_allowed_values():
    before = lockstep.emulator_options()
    with pytest.raises(ValueError, match="forward.*reverse.*random"):
        lockstep.set_emulator_options(order="backwards")
    with pytest.raises(ValueError):
        lockstep.set_emulator_options(stack_kib=1)  # below the emulator's 16 KiB minimum
    assert lockstep.emulator_options() == before


def test_extension_keeps_its_symbol_table():
    # The emulator finds each kernel's static __shared__ size in the module's
    # .symtab; a stripped build would silently lose it.
    with open(lockstep._core.__file__, "rb") as f:
        elf = f.read()
    assert elf[:4] == b"\x7fELF" and elf[4] == 2  # 64-bit
    section_offset, = struct.unpack_from("<Q", elf, 0x28)
    entry_size, count = struct.unpack_from("<HH", elf, 0x3A)
    types = [struct.unpack_from("<I", elf, section_offset + i * entry_size + 4)[0] for i in range(count)]
    assert 2 in types, "no SHT_SYMTAB section: the extension was stripped"
