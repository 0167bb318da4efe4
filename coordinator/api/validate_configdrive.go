package api

import "net/url"

// maxServerURL bounds status.configDrive.server.
const maxServerURL = 2048

// artifactServerURL reports whether s is an artifact server's base URL:
// http or https, a host, no query, fragment or user info, at most
// maxServerURL bytes.
func artifactServerURL(s string) bool {
	if len(s) > maxServerURL {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.RawQuery == "" && u.Fragment == "" && u.User == nil
}
