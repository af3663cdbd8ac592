# kopf-scheduler: the operator image. Build: docker build -t kopf-scheduler:0.1.0 .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    KOPF_SCHEDULER_OPERATOR_DIR=/app/operator

RUN groupadd --gid 10001 app && useradd --uid 10001 --gid app --no-create-home --shell /usr/sbin/nologin app

WORKDIR /src
COPY pyproject.toml README.md ./
COPY scheduler/ scheduler/
RUN pip install . && rm -rf /src

# operator/ is Kopf's handler scripts, loaded by path (it is not a package).
COPY operator/ /app/operator/
WORKDIR /app

USER 10001:10001
EXPOSE 10259
ENTRYPOINT ["kopf-scheduler", "run"]
