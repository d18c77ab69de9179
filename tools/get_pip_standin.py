"""Offline stand-in for ansible-test's get-pip.py (this machine reaches PyPI, not ci-files).

ansible-test runs this file as ``__main__`` with pip's options and the pinned infrastructure
packages (e.g. ``pip==25.2``) as arguments. We bootstrap pip with the stdlib's ensurepip in a
subprocess (it must not run inside this interpreter's import state), then let that pip install
what was asked for from PyPI. get-pip's own flags (--no-setuptools, --no-wheel) are dropped.
"""
import subprocess
import sys

OWN_FLAGS = {"--no-setuptools", "--no-wheel"}


def main():
    args = [a for a in sys.argv[1:] if a not in OWN_FLAGS]
    subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade", "--default-pip"],
                          stdout=subprocess.DEVNULL)
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet"] + args)


if __name__ == "__main__":
    main()
