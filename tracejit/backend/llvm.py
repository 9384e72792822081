"""LLVM for the host: one MCJIT engine per process (a second engine made from the same TargetMachine
segfaulted), modules optimised at O3 with loop vectorization for the host CPU and its features (SLP
vectorization is off: fused loops are vectorized by the loop vectorizer, and SLP cost 14 of 65 ms of a
1,000-op chain's compile for nothing measurable at run time);
loops are unrolled or interleaved only where their metadata asks (codegen.Program._loop_metadata), which
halved LLVM's time on the MLP train step (230 -> 120 ms) at no measured cost in run time."""
import functools
import threading

import llvmlite.binding as llvm

_lock = threading.RLock()


def _target_machine():
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                        features=llvm.get_host_cpu_features().flatten(),
                                        opt=3, reloc="default", codemodel="jitdefault")


@functools.cache
def _jit():
    """(engine, target machine for passes and assembly). The engine owns its own TargetMachine."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = _target_machine()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _target_machine())
    return engine, tm


def module_header():
    _, tm = _jit()
    return f'target triple = "{tm.triple}"\ntarget datalayout = "{tm.target_data}"\n'


def optimize(text):
    """Parse and optimise LLVM IR text; returns the llvmlite module."""
    _, tm = _jit()
    with _lock:
        mod = llvm.parse_assembly(text)
        mod.verify()
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = False   # loops vectorize whole; SLP took 20% of LLVM's time at 1000 ops
        pto.loop_unrolling = False      # see codegen.Program._loop_metadata
        pto.loop_interleaving = False
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(mod, pb)
        return mod


def emit_object(mod):
    """Object code (ELF, Mach-O or COFF bytes) for an optimised module; as fast as MCJIT's own codegen."""
    _, tm = _jit()
    with _lock:
        return tm.emit_object(mod)


def load_object(data, names, symbols):
    """Link object code into the engine, its external symbols resolved from symbols (name -> address);
    returns the addresses of the named functions. Symbols are resolved when the object is finalized, so
    every object may reuse the names with its own addresses."""
    engine, _ = _jit()
    with _lock:
        for name, address in symbols.items():
            llvm.add_symbol(name, address)
        engine.add_object_file(llvm.ObjectFileRef.from_data(data))
        engine.finalize_object()
        return [engine.get_function_address(n) for n in names]


def assembly(llvm_text):
    """Machine code for optimised LLVM IR text, as assembly."""
    _, tm = _jit()
    with _lock:
        return tm.emit_assembly(llvm.parse_assembly(llvm_text))
