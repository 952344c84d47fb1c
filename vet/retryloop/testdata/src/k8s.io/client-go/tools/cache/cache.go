// Package cache is a stand-in for client-go's informer cache: a Store the
// informer keeps in step with the API server, read from memory.
package cache

// Store holds the objects an informer has seen.
type Store interface {
	List() []interface{}
	GetByKey(key string) (item interface{}, exists bool, err error)
}

// SharedIndexInformer watches the API server and fills its Store.
type SharedIndexInformer interface {
	GetStore() Store
	HasSynced() bool
}
