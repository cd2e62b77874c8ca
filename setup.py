"""Build of the Python package and its Cython engine.

Every ``sim_node/engine/*.pyx``, ``engine/pipeline/*.pyx`` and ``engine/queries/*.pyx`` becomes an
extension module. Paths are absolute from this file
because colcon builds out of source. Cython only regenerates C files whose sources changed, and
setuptools only recompiles stale objects, so a second build is quick.
"""
import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).resolve().parent
ENGINE = HERE / "sim_node" / "engine"

COMPILE_ARGS = ["-O3", "-fno-math-errno", "-fno-trapping-math", "-Wno-unused-function",
                "-Wno-unreachable-code"]
if os.environ.get("SIM_NODE_NATIVE", "0") == "1":
    COMPILE_ARGS.append("-march=native")

# Modules that spread independent work over threads (prange) link OpenMP.
OPENMP_MODULES = {"batched", "raycast", "render"}

extensions = [
    Extension(
        ".".join(pyx.relative_to(HERE).with_suffix("").parts),
        [str(pyx.relative_to(HERE))],
        include_dirs=[numpy.get_include(), str(ENGINE)],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=COMPILE_ARGS + (["-fopenmp"] if pyx.stem in OPENMP_MODULES else []),
        extra_link_args=["-fopenmp"] if pyx.stem in OPENMP_MODULES else [],
    )
    for pyx in sorted([*ENGINE.glob("*.pyx"), *ENGINE.glob("pipeline/*.pyx"),
                       *ENGINE.glob("queries/*.pyx")])
    # SIM_NODE_EXTENSIONS=api,solver builds just those while iterating on them
    if not os.environ.get("SIM_NODE_EXTENSIONS")
    or pyx.stem in os.environ["SIM_NODE_EXTENSIONS"].split(",")
]

os.chdir(HERE)
setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
            "nonecheck": False,
            "embedsignature": True,
        },
        nthreads=os.cpu_count() or 1,
    ),
)
