# Multi-stage build: pg_query's C parser needs cgo, so the build stage has gcc.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o /out/pgranger ./cmd/proxy

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin pgranger
COPY --from=build /out/pgranger /usr/local/bin/pgranger
COPY examples/pgranger.toml /etc/pgranger/pgranger.toml
COPY examples/policies /etc/pgranger/policies
USER pgranger
EXPOSE 6432
ENTRYPOINT ["/usr/local/bin/pgranger"]
CMD ["serve", "--config", "/etc/pgranger/pgranger.toml"]
