"""`pip install .` from the checkout: the Python package (python/phaze) with its extension module built by
CMake from the same C++ as the command line. No network: Debian's setuptools, pybind11 and pandas."""

import os
import pathlib
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    """Builds the extension with the project's CMake (target _phaze) and puts it where setuptools expects it."""

    def build_extension(self, ext):
        build = pathlib.Path(self.build_temp).resolve() / "cmake"
        build.mkdir(parents=True, exist_ok=True)
        python = os.environ.get("PHAZE_PYTHON", "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3")
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                        "-DBUILD_TESTING=OFF",
                        "-DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON", f"-DPython3_EXECUTABLE={python}"], check=True,
                       stdout=subprocess.DEVNULL)
        jobs = str(os.cpu_count() or 2)
        subprocess.run(["cmake", "--build", str(build), "--target", "_phaze", "-j", jobs], check=True)
        built = next((build / "python" / "phaze").glob("_phaze*.so"))
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        self.copy_file(str(built), str(target))


setup(
    name="phaze",
    version="0.1.0",
    description="Co-search of accelerator architecture and distributed training plans for large language models",
    packages=["phaze"],
    package_dir={"": "python"},
    package_data={"phaze": ["py.typed", "*.pyi"]},
    ext_modules=[Extension("phaze._phaze", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own build tree, apart from CMake's build/ that `make` uses.
    options={"build": {"build_base": "build-pip"}},
    python_requires=">=3.9",
)
