"""sitedir.py PREFIX - print where `make install` puts the Python package cairn.

The directory this Python reads packages from for PREFIX: on Debian (whose
python3 has the 'posix_local' install scheme) /usr/lib/python3/dist-packages
for PREFIX=/usr and PREFIX/lib/python3.X/dist-packages otherwise (on the path
by default for /usr/local); elsewhere the 'posix_prefix' scheme's purelib,
PREFIX/lib/python3.X/site-packages. For a PREFIX whose directory is not on
the path, set PYTHONPATH to the printed directory.
"""
import os
import sys
import sysconfig


def sitedir(prefix):
    prefix = os.path.normpath(prefix)
    schemes = sysconfig.get_scheme_names()
    if "posix_local" in schemes and "deb_system" in schemes:  # Debian's python3
        if prefix == "/usr":
            return sysconfig.get_path("purelib", "deb_system", {"base": "/usr", "platbase": "/usr"})
        ver = "%d.%d" % sys.version_info[:2]
        return os.path.join(prefix, "lib", "python" + ver, "dist-packages")
    return sysconfig.get_path("purelib", "posix_prefix", {"base": prefix, "platbase": prefix})


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1]:
        sys.exit("usage: sitedir.py PREFIX")
    print(sitedir(sys.argv[1]))
