//go:build tools

package main

import (
	_ "github.com/gofiber/fiber/v2"
	_ "github.com/gofiber/fiber/v2/middleware/recover"
	_ "github.com/gofiber/fiber/v2/middleware/requestid"
	_ "github.com/hamba/avro/v2"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/client_golang/prometheus/collectors"
	_ "github.com/twmb/franz-go/pkg/kadm"
	_ "github.com/twmb/franz-go/pkg/kfake"
	_ "github.com/twmb/franz-go/pkg/kgo"
	_ "github.com/twmb/franz-go/pkg/sr"
	_ "gopkg.in/yaml.v3"
	_ "github.com/twmb/franz-go/plugin/kprom"
)

func main() {}
