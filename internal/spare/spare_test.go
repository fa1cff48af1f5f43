package spare

import "testing"

func TestListGivesBackWhatWasPutUpToItsBound(t *testing.T) {
	var l List[int]
	if l.Get() != nil {
		t.Fatal("an empty list gave an object")
	}
	a, b, c := new(int), new(int), new(int)
	l.Put(a, 2)
	l.Put(b, 2)
	l.Put(c, 2) // past the bound: dropped
	if got := l.Get(); got != b {
		t.Fatal("Get did not give the last object put")
	}
	if got := l.Get(); got != a {
		t.Fatal("Get did not give the first object put second")
	}
	if l.Get() != nil {
		t.Fatal("an object put past the bound was kept")
	}
}
