# Autograd Studio in one container: K app workers behind HAProxy (python -m studio.serve), K = the
# container's CPUs. Runs as a non-root user from a read-only copy of the app. See docs/deploy.md.
#
#   docker build -t autograd-studio .
#   docker run --rm -p 8501:8501 --read-only --tmpfs /tmp --tmpfs /home/studio autograd-studio
#
# A CUDA build: --build-arg TORCH_INDEX=<the index URL PyTorch's "Get Started" page gives> and a CUDA
# base image; the CPU wheel below keeps the image small.
FROM python:3.11-slim-bookworm

ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HOME=/home/studio

# HAProxy from Debian, as in the multi-worker setup on a bare machine; bubblewrap, the sandbox's second wall
# around student code (where the container may create user namespaces; elsewhere the rlimits alone apply).
RUN apt-get update \
 && apt-get install -y --no-install-recommends haproxy bubblewrap \
 && rm -rf /var/lib/apt/lists/*

COPY requirements.txt /tmp/requirements.txt
RUN pip install --index-url "$TORCH_INDEX" "$(grep -E '^torch==' /tmp/requirements.txt)" \
 && pip install -r /tmp/requirements.txt \
 && rm /tmp/requirements.txt

# The app belongs to root and nobody may write it: the user that runs it can only read it. Nothing in
# the app writes into its own folder (plotly.js is served from the installed package); bytecode is
# compiled here, once.
COPY . /app
RUN python -m compileall -q /app \
 && chown -R root:root /app \
 && chmod -R a-w,a+rX /app \
 && useradd --uid 10001 --create-home --home-dir /home/studio --shell /usr/sbin/nologin studio

USER studio
WORKDIR /app
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s \
  CMD python -c "import urllib.request as u; u.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"
# HAProxy on 8501 for every interface of the container; the workers on 127.0.0.1:8600.. inside it.
CMD ["python", "-m", "studio.serve", "--port", "8501", "--address", "0.0.0.0"]
