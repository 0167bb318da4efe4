// Package docs holds no code: its tests keep the repository's documents
// honest (no pointer to a file outside the repository, no design history
// in text an operator reads, every file a page names exists).
package docs
