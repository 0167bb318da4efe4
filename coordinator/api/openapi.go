package api

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
	"sigs.k8s.io/yaml"
)

// openAPIYAML is the OpenAPI 3.1 document of this API, kept beside the
// handlers it describes. openapi_test.go fails when a route has no path in
// it (or the other way round) and validates recorded answers against it.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPIJSON is the document as JSON, as GET /v1/openapi.json serves it.
var OpenAPIJSON = mustJSON(openAPIYAML)

func mustJSON(y []byte) []byte {
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		panic("coordinator/api: openapi.yaml is not valid YAML: " + err.Error())
	}
	return j
}

// openAPI serves the document; it needs no token (it holds no secret).
func (s *Server) openAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, OpenAPIJSON)
}
