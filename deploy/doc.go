// Package deploy holds the deployment files (the Dockerfile, the compose file at the
// repository root, the dependency and model scripts) and the tests that check them against
// the real build where no container runtime runs: the image's runtime packages against the
// shared libraries of a built binary, the compose file through compose-go, the parser of
// docker compose.
package deploy
