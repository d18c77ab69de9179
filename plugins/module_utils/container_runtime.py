# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reader of what ``docker run`` and ``podman run`` print when they fail: the runtime's own error text, kept
verbatim, and what it means for a GPU container (the NVIDIA Container Toolkit, CDI, the OCI runtime that
daemon.json names, the image).

The texts come from the runtimes' public issue trackers, each cited where it is matched below; the patterns
match the stable part of them (the container id, the runtime's name and the image are left open). Pure
standard library (Python 3.8+), no Ansible imports: nothing here starts a process.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# Lines the CLIs add after an error, which say nothing about it: docker's usage pointer (exit 125), the
# client's "error waiting for container" after the daemon refused to start one (NVIDIA/nvidia-container-
# toolkit#434) and podman's hint for the same.
_NOISE_RE = re.compile(r"^(See '[^']+ --help'\.|Run '[^']+ --help' for more information\.?|"
                       r"ERRO\[\d+\] error waiting for container: .*|time=\S+ level=(?:warning|info) .*)$")
# The first line of the runtime's error: docker's "docker: Error response from daemon: ..." (also without
# the "docker: " prefix, as compose and the API print it), podman's "Error: ..." (and "podman: Error: ...").
_ERROR_START_RE = re.compile(r'^(?:(?:docker|podman): )?(?:Error response from daemon: |Error: |error: )')

# What a failure means, first match wins: (kind, pattern, hint). Sources of the texts in the comments.
DIAGNOSES = (
    # NVIDIA/nvidia-docker#1034, hiyouga/LlamaFactory#5268, recorded in the lab (docker.io 20.10.24 and 26.1.5): docker
    # --gpus where dockerd registered no GPU driver - no toolkit (no nvidia-container-runtime-hook on dockerd's PATH
    # when it started)
    ('no_gpu_driver', re.compile(r'could not select device driver "(?:nvidia)?" with capabilities: \[\[gpu\]\]'),
     'dockerd has no GPU device driver: the NVIDIA Container Toolkit is not installed, or dockerd started before '
     'nvidia-container-runtime-hook was on its PATH (install the toolkit - gpufleet.cluster.container_toolkit - '
     'and restart docker)'),
    # NVIDIA/nvidia-container-toolkit#434, recorded in the lab (docker.io 26.1.5): docker --device nvidia.com/gpu=all
    # without CDI enabled in dockerd
    ('cdi_disabled', re.compile(r'could not select device driver "cdi"'),
     'CDI is not enabled in dockerd: Docker 25 or later with "features": {"cdi": true} in daemon.json'),
    # recorded in the lab (molecule/container_gpus, Debian's docker.io 20.10.24): a docker CLI older than CDI takes
    # --device nvidia.com/gpu=all for a device path
    ('cdi_unsupported', re.compile(r'nvidia\.com/gpu=\S+ is not an absolute path'),
     'this docker predates CDI device names: CDI needs Docker 25 or later (or podman); use mode gpus here'),
    # moby/moby#47633, NVIDIA/nvidia-container-toolkit#146, NixOS/nixpkgs#420638: no CDI spec names the device
    ('cdi_unresolvable', re.compile(r'unresolvable CDI devices'),
     'no CDI specification names the device: generate it with nvidia-ctk cdi generate into /etc/cdi or '
     '/var/run/cdi (gpufleet.cluster.container_toolkit, container_toolkit_cdi)'),
    # mdegans/nano_build_opencv#85, NVIDIA/nvidia-docker#1190 and #1121: the OCI runtime binary that daemon.json
    # names (runtimes, default-runtime) does not exist
    ('runtime_missing', re.compile(r'unable to retrieve OCI runtime error .*(?:executable file not found|'
                                   r'no such file or directory: unknown)|fork/exec [^:]*: no such file or directory'),
     "the OCI runtime binary that dockerd's configuration names (daemon.json runtimes / default-runtime) is missing"),
    ('runtime_unknown', re.compile(r'unknown or invalid runtime name'),
     'the OCI runtime asked for (--runtime, default-runtime) is not among the runtimes dockerd knows (daemon.json '
     'runtimes)'),
    # NVIDIA/nvidia-container-toolkit#679: the toolkit's prestart hook failed (nvidia-container-cli)
    ('toolkit_hook', re.compile(r'nvidia-container-cli: |error running (?:prestart )?hook'),
     "the NVIDIA Container Toolkit's hook failed: the driver's libraries or devices could not be found or mounted"),
    # NVIDIA/nvidia-docker#1668 (runc), NVIDIA/nvidia-container-runtime#190 (crun, podman --gpus without CDI):
    # the container started but has no nvidia-smi - the toolkit did not inject it and the image has none
    ('command_missing', re.compile(r'exec: "[^"]+": executable file not found in \$PATH|'
                                   r'executable file `[^`]+` not found in \$PATH'),
     'the container has no nvidia-smi: the GPU runtime did not inject the driver utilities (no GPU passed in, or '
     'NVIDIA_DRIVER_CAPABILITIES without utility) and the image brings none'),
    ('image_missing', re.compile(r'No such image|Unable to find image|pull access denied|manifest unknown|'
                                 r'repository does not exist|not found: manifest|image not known|'
                                 r'failed to resolve reference|initializing source'),
     'the image is not in the local image store and could not be pulled from the registry its name gives: load '
     'it (docker load / import) or push it to the local registry or mirror'),
    ('daemon_down', re.compile(r'Cannot connect to the Docker daemon|Is the docker daemon running'),
     'dockerd is not running or its socket cannot be reached'),
    ('permission', re.compile(r'permission denied while trying to connect to the Docker daemon socket'),
     'no access to the docker socket (run as root or a member of the docker group)'),
)


def error_text(stderr, stdout=''):
    """The runtime's own error, verbatim: the lines from its first error line (``docker: Error response from
    daemon: ...``, ``Error: ...``) to the end without the CLI's usage pointer and "error waiting for container"
    noise (a hook's message continues on the next lines); without an error line, the last line that is not
    noise, of stderr, else of stdout; None when both are empty."""
    for stream in (stderr, stdout):
        if isinstance(stream, bytes):
            stream = stream.decode('utf-8', 'replace')
        lines = [line.rstrip() for line in (stream or '').splitlines() if line.strip()]
        lines = [line for line in lines if not _NOISE_RE.match(line.strip())]
        for i, line in enumerate(lines):
            if _ERROR_START_RE.match(line.strip()):
                return ' '.join(part.strip() for part in lines[i:])
        if lines:
            return lines[-1].strip()
    return None


def diagnose(text):
    """``(kind, hint)`` for the runtime's error ``text``: what a GPU container's failure means (see
    DIAGNOSES); ``('other', None)`` when no known text matches, ``(None, None)`` for no text."""
    if not text:
        return None, None
    for kind, pattern, hint in DIAGNOSES:
        if pattern.search(text):
            return kind, hint
    return 'other', None
