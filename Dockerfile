# The Lazarus image: every worker role and the node agent run from it (helm/lazarus).
#   docker build -t lazarus:0.1.0 .
#   docker run --rm lazarus:0.1.0 --help
# The build stage makes a wheel so that the final image carries no build tools or sources.
FROM python:3.11-slim AS build
WORKDIR /src
# The whole context, minus what .dockerignore drops (tests, docs, venvs): a new package listed in
# pyproject.toml is picked up without editing this file.
COPY . .
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
# Bytecode cannot be written on the chart's read-only root file system; unbuffered so that log
# lines reach `kubectl logs` at once.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
# A numeric, non-root user: Kubernetes' runAsNonRoot can only verify a numeric USER. The chart's
# podSecurityContext uses the same uid/gid (tests/helm checks that they agree).
RUN groupadd --gid 10001 lazarus && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin lazarus
USER 10001:10001
WORKDIR /tmp
ENTRYPOINT ["lazarus"]
CMD ["--help"]
