# syntax=docker/dockerfile:1.4
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
# Every runtime dependency pinned (the closure of pyproject's dependencies), so two builds of one
# commit ship the same bytes; tests/deploy/test_dockerfile.py fails when pyproject and the pins drift apart.
RUN pip install --constraint /dev/stdin . <<'PINS' && rm -rf /src
aiohappyeyeballs==2.7.1
aiohttp==3.14.5
aiosignal==1.4.0
annotated-doc==0.0.7
annotated-types==0.8.0
attrs==26.1.0
cffi==2.1.1
click==8.5.1
common-expression-language==0.10.0
cryptography==50.0.2
frozenlist==1.8.0
idna==3.20
iso8601==2.1.0
jsonpatch==1.48
jsonpointer==3.12
kopf==1.45.2
markdown-it-py==4.3.0
mdurl==0.1.2
multidict==7.2.1
numpy==2.4.6
orjson==3.13.0
prometheus-client==0.26.0
prompt-toolkit==3.0.53
propcache==0.5.4
pycparser==3.12
pydantic==2.14.4
pydantic-core==2.50.5
pygments==2.21.0
python-json-logger==4.2.0
pyyaml==6.0.4
rich==15.0.0
shellingham==1.5.4
typer==0.29.2
typing-extensions==4.16.0
typing-inspection==0.4.5
uvloop==0.23.0
wcwidth==0.9.4
yarl==1.25.1
PINS

# operator/ is Kopf's handler scripts, loaded by path (it is not a package).
COPY operator/ /app/operator/
WORKDIR /app

USER 10001:10001
EXPOSE 10259
ENTRYPOINT ["kopf-scheduler", "run"]
